import t from 'tap';
import { dsnVerdict, parseDeliveryStatus } from '../engines/bounces/dsn.js';
import { decodeInbound } from '../engines/bounces/formats/index.js';
import { readFileSync } from 'node:fs';
import { classifyFailure, smtpCommand } from '../engines/bounces/reason.js';
import { generatedReasonPart, REASONS_DOC, reasonTable } from '../domain/bounces/reason-doc.js';
import { BOUNCE_REASONS } from '../engines/bounces/reason-names.js';
import { REASON_TABLE } from '../engines/bounces/reason-table.js';
import { qmailBounce } from './helpers/qmail-bounce.js';

/**
 * The bounce classifier's rules (engines/bounces/reason.ts), one by one, on replies written the way
 * servers write them; and the decoder's refusals to see a bounce where there is none.
 */
type Facts = Parameters<typeof classifyFailure>[0];
const c = (facts: Facts) => {
  const r = classifyFailure(facts);
  return `${r.bounceClass}:${r.reason}`;
};
const C = (code: number | undefined, status: string | undefined, diagnostic: string | undefined, extra: Partial<Facts> = {}): Facts => ({
  ...(code !== undefined ? { code } : {}),
  ...(status ? { status } : {}),
  ...(diagnostic ? { diagnostic } : {}),
  ...extra,
});

/**
 * One family of reasons per test, each with phrasings of different MTAs and providers (written
 * here, not taken from the corpus): the verdict follows the reason, never the class digit alone.
 */


const FAMILIES: Record<string, Array<[Facts, string]>> = {
 'userunknown, hard whatever the class digit': [
  [C(550,'5.1.1','550 5.1.1 <ann@x.org>: Recipient address rejected: User unknown in virtual alias table'),'hard:userunknown'],
  [C(550,'5.1.1',"550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address"),'hard:userunknown'],
  [C(550,'5.5.0','550 5.5.0 Requested action not taken: mailbox unavailable, user unknown', {command:'RCPT'}),'hard:userunknown'],
  [C(450,'4.1.1','450 4.1.1 <ann@x.org>: Recipient address rejected: unverified address: user does not exist', {command:'RCPT'}),'hard:userunknown'],
  [C(550,'5.0.0','550 5.0.0 <ann@x.org>... No such user here'),'hard:userunknown'],
  [C(550,undefined,'550 Recipient not found: no mailbox by that name'),'hard:userunknown'],
  [C(undefined,undefined,'ann@x.org: the recipient name is not recognized'),'hard:userunknown'],
  [C(554,'5.0.0',"554 delivery error: dd This user doesn't have a x.org account (ann@x.org) [0]", {command:'DATA'}),'hard:userunknown'],
  [C(550,'5.1.10','550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'),'hard:userunknown'],
 ],
 'hostunknown and notaccept, hard': [
  [C(550,'5.1.2','550 5.1.2 Host unknown (Name server: mx.x.org: host not found)'),'hard:hostunknown'],
  [C(554,'5.4.4','554 5.4.4 [internal] Domain name not found'),'hard:hostunknown'],
  [C(undefined,undefined,'Unrouteable address'),'hard:hostunknown'],
  [C(550,undefined,'550 Host or domain name not found. Name service error for name=x.org type=A: Host not found'),'hard:hostunknown'],
  [C(556,'5.1.10','556 5.1.10 Recipient address has null MX'),'hard:notaccept'],
  [C(521,undefined,'521 mx.x.org does not accept mail'),'hard:notaccept'],
  [C(421,'4.3.2','421 4.3.2 System not accepting network messages'),'soft:notaccept'],
 ],
 'a temporary DNS answer is the network, not a dead domain': [
  [C(undefined,undefined,'Name service error for domain x.org: Host not found, try again'),'soft:networkerror'],
  [C(451,'4.4.3',"451 4.4.3 DNS error: temporary failure in name resolution"),'soft:networkerror'],
 ],
 'filtered: an address refused after it was accepted, soft even with 5.x.x': [
  [C(550,'5.0.0','550 Unknown user ann@x.org', {command:'DATA'}),'soft:filtered'],
  [C(550,undefined,'550 <ann@x.org>... User unknown'),'soft:filtered'],
  [C(550,'5.2.1','550 5.2.1 <ann@x.org>... User Unknown'),'soft:filtered'],
  [C(550,'5.2.1','550 5.2.1 <ann@x.org>... Mailbox disabled, not accepting messages'),'soft:suspend'],
  [C(550,'5.7.1','550 5.7.1 Message rejected due to user rules'),'soft:filtered'],
  [C(550,'5.1.1','550 5.1.1 RCP-P2 Refused due to recipient preferences'),'soft:filtered'],
  [C(554,undefined,'554 Sorry, the recipient refuses to receive mail from you', {command:'DATA'}),'soft:filtered'],
 ],
 'mailbox full, suspended, moved': [
  [C(552,'5.2.2','552 5.2.2 Mailbox full'),'soft:mailboxfull'],
  [C(452,'4.2.2','452 4.2.2 <ann@x.org>: user is over quota'),'soft:mailboxfull'],
  [C(550,'5.1.1','550 5.1.1 <ann@x.org> user unknown: mailbox quota exceeded'),'soft:mailboxfull'],
  [C(550,'5.2.1','550 5.2.1 This mailbox has been suspended'),'soft:suspend'],
  [C(525,'5.7.13','525 5.7.13 User account disabled'),'soft:suspend'],
  [C(550,'5.1.6','550 5.1.6 Recipient has moved; no forwarding address'),'hard:hasmoved'],
  [C(551,undefined,'551 User not local; please try <ann@y.org>'),'hard:hasmoved'],
 ],
 'the sender refused': [
  [C(553,'5.1.8','553 5.1.8 <b@send.example>: Sender address rejected: Domain not found'),'soft:rejected'],
  [C(550,'5.1.0','550 5.1.0 <b@send.example>: Sender address rejected: Domain not found'),'soft:rejected'],
  [C(550,'5.1.1','550 5.1.1 User unknown', {command:'MAIL'}),'soft:rejected'],
  [C(550,undefined,'550 sender verify failed', {command:'MAIL'}),'soft:rejected'],
  [C(550,'5.7.1','550 5.7.1 You are not allowed to post to this mailing list'),'soft:rejected'],
 ],
 'blocks, spam, policy, authentication: soft': [
  [C(550,'5.0.0','550 5.0.0 Blocked - see https://www.spamcop.net/bl.shtml?192.0.2.1'),'soft:blocked'],
  [C(550,'5.7.1','550 5.7.1 Service unavailable; client host [192.0.2.1] blocked using zen.spamhaus.org'),'soft:blocked'],
  [C(554,'5.7.1','554 5.7.1 Message rejected as spam by Content Filtering', {command:'DATA'}),'soft:spamdetected'],
  [C(550,'5.7.28','550 5.7.28 flood of similar abusive messages'),'soft:spamdetected'],
  [C(550,'5.7.26',"550-5.7.26 Unauthenticated email from x.org is not accepted due to domain's DMARC policy"),'soft:authfailure'],
  [C(550,'5.7.1','550 5.7.1 SPF check failed: x.org does not designate 192.0.2.1 as permitted sender'),'soft:authfailure'],
  [C(550,'5.7.1','550 5.7.1 Client host rejected: cannot find your reverse hostname'),'soft:requireptr'],
  [C(554,'5.7.1','554 5.7.1 <ann@x.org>: Relay access denied'),'soft:norelaying'],
  [C(554,'5.7.0','554 5.7.0 Virus found in message'),'soft:virusdetected'],
 ],
 'size, rate, connections': [
  [C(552,'5.3.4','552 5.3.4 Message size exceeds fixed limit'),'soft:mesgtoobig'],
  [C(552,'5.2.3','552 5.2.3 Message exceeds maximum size allowed for this user'),'soft:mesgtoobig'],
  [C(421,'4.7.0','421 4.7.0 Too many concurrent SMTP connections from this IP'),'soft:toomanyconn'],
  [C(450,'4.7.1','450 4.7.1 Rate limit exceeded, try again slower'),'soft:speeding'],
 ],
 'expired and system errors': [
  [C(undefined,'4.4.7','Delivery time expired', {action:'expired'}),'soft:expired'],
  [C(undefined,'5.4.7','550 5.4.7 Message expired: retry timeout exceeded'),'soft:expired'],
  [C(undefined,undefined,'retry timeout exceeded', {action:'failed'}),'soft:expired'],
  [C(451,'4.3.0','451 4.3.0 Internal server error'),'soft:systemerror'],
  [C(undefined,undefined,'Command died with status 1: "/usr/bin/procmail"', {diagnosticType:'x-unix'}),'soft:mailererror'],
  [C(500,undefined,'500 Syntax error, command unrecognized'),'soft:syntaxerror'],
 ],
 'nothing specific: onhold, soft': [
  [C(550,undefined,'550 Requested action not taken'),'soft:onhold'],
  [C(550,'5.0.0','550 5.0.0 Rejected'),'soft:onhold'],
  [C(undefined,undefined,undefined),'soft:undefined'],
 ],
};

for (const [family, rows] of Object.entries(FAMILIES)) {
  t.test(family, async (t) => {
    for (const [facts, want] of rows) t.equal(c(facts), want, facts.diagnostic ?? JSON.stringify(facts));
  });
}

t.test('a reason the format states stands, unless a more specific probe comes first', async (t) => {
  t.equal(classifyFailure({ diagnostic: 'You are not a member of this list' }, 'rejected').reason, 'rejected');
  t.equal(classifyFailure({ diagnostic: 'Unknown user: ann@x.org' }, 'userunknown').bounceClass, 'hard');
  t.equal(classifyFailure({ diagnostic: 'Unknown user: ann@x.org, mailbox full' }, 'userunknown').reason, 'mailboxfull');
});

t.test('the refused command', async (t) => {
  t.equal(smtpCommand('550 Unknown user (in reply to end of DATA\n    command)'), 'DATA');
  t.equal(smtpCommand('SMTP error from remote mail server after MAIL FROM:<a@b> SIZE=1:'), 'MAIL');
  t.equal(smtpCommand('>>> DATA\n<<< 550 5.1.1 <a@b>... User Unknown\n<<< 503 5.0.0 Need RCPT (recipient)'), 'DATA', "a transcript's first command, as the reference analyser reads it");
  t.equal(c({ code: 550, status: '5.1.1', diagnostic: '550 5.1.1 <a@b>... User Unknown', command: 'DATA' }), 'hard:userunknown', 'an x.1.1 status is believed at any command');
  t.equal(smtpCommand('Connected to 192.0.2.1 but my name was rejected.'), 'HELO');
  t.equal(smtpCommand('Connected to 192.0.2.1 but greeting failed.'), 'CONN');
  t.equal(smtpCommand('host mx.x.org[192.0.2.1] refused to talk to me: 554 blocked'), 'HELO');
  t.equal(smtpCommand("... while talking to mx.example.org.:\n>>> DATA\n<<< 554 delivery error: dd This user doesn't have an account"), 'DATA');
  t.equal(smtpCommand('Sorry, no SMTP connection got far enough; most progress was RCPT TO response'), 'RCPT', 'a command named in capitals');
  t.equal(smtpCommand('Technical details: SMTP:RCPT host 192.0.2.8: 553 5.3.0 unknown'), 'RCPT');
  t.equal(smtpCommand('550 User Unknown [RCPT_TO]'), 'RCPT');
  t.equal(smtpCommand('550 no such user DATABASE@x.org'), undefined, 'not inside an address');
});

t.test("a generic Status field gives way to the remote server's own code", async (t) => {
  const block = (status: string, diag: string) => parseDeliveryStatus(`Reporting-MTA: dns; x\n\nFinal-Recipient: rfc822; ann@example.org\nAction: failed\nStatus: ${status}\nDiagnostic-Code: smtp; ${diag}\n`).recipients;
  t.match(dsnVerdict({ recipients: block('5.0.0', '550 5.1.1 <ann@example.org>... User unknown') }, 'ann@example.org'), { bounceClass: 'hard', reason: 'userunknown', status: '5.1.1' });
  t.match(dsnVerdict({ recipients: block('5.3.0', '552 5.2.2 Quota exceeded (mailbox for user is full)') }, 'ann@example.org'), { bounceClass: 'soft', reason: 'mailboxfull', status: '5.2.2' });
  t.match(dsnVerdict({ recipients: block('5.1.1', '550 5.0.0 Refused due to recipient preferences') }, 'ann@example.org'), { bounceClass: 'soft', reason: 'filtered', status: '5.1.1' });
});

t.test('a delay that says the queue gave up is a soft bounce; a transient delay stays a delay', async (t) => {
  const block = (status: string, diag: string) => parseDeliveryStatus(`Reporting-MTA: dns; x\n\nFinal-Recipient: rfc822; ann@example.org\nAction: delayed\nStatus: ${status}\nDiagnostic-Code: smtp; ${diag}\n`).recipients;
  t.match(dsnVerdict({ recipients: block('4.4.7', '421 4.4.7 Delivery time expired') }, 'ann@example.org'), { kind: 'failed', bounceClass: 'soft', reason: 'expired' });
  t.match(dsnVerdict({ recipients: block('4.4.1', 'Message expired after 5 days: retry timeout exceeded') }, 'ann@example.org'), { kind: 'failed', bounceClass: 'soft', reason: 'expired' });
  t.match(dsnVerdict({ recipients: block('4.0.0', 'unable to deliver this message after 3 days; giving up') }, 'ann@example.org'), { kind: 'failed', reason: 'expired' });
  t.match(dsnVerdict({ recipients: block('4.4.1', 'connect to mx.x.org: Connection timed out; will retry for 4 more days') }, 'ann@example.org'), { kind: 'delayed' });
  t.match(dsnVerdict({ recipients: block('4.4.7', 'Envelope expired. This is only a temporary failure report') }, 'ann@example.org'), { kind: 'delayed' });
  t.match(dsnVerdict({ recipients: block('4.2.2', '452 4.2.2 Mailbox full') }, 'ann@example.org'), { kind: 'delayed', reason: 'mailboxfull' });
});

t.test('no bounce where there is none', async (t) => {
  const mdn = [
    'From: ann@example.org', 'Subject: Read: Hello', 'MIME-Version: 1.0', 'Content-Type: multipart/report; report-type=disposition-notification; boundary="b"', '',
    '--b', 'Content-Type: text/plain', '', 'Your message was read.', '--b', 'Content-Type: message/disposition-notification', '',
    'Final-Recipient: rfc822; ann@example.org', 'Disposition: manual-action/MDN-sent-manually; displayed', '--b--', '',
  ].join('\r\n');
  t.match(await decodeInbound(mdn), { kind: 'nothing', format: 'MDN' });
  const notice = ['From: postmaster@example.org', 'Subject: Delivery Notification: Delivered', '', 'Your message has been delivered to ann@example.org.', ''].join('\r\n');
  t.match(await decodeInbound(notice), { kind: 'nothing' }, 'a mail system notice without any failure');
  const vacation = ['From: ann@example.org', 'Subject: Out of office', 'Auto-Submitted: auto-replied', '', 'I am away.', ''].join('\r\n');
  t.match(await decodeInbound(vacation), { kind: 'nothing', format: 'auto-reply' });
});

const QMAIL = qmailBounce('ann@example.org');

t.test('a bounce forwarded inside message/rfc822 is read from the attached message', async (t) => {
  const forwarded = [
    'From: Ann Helpdesk <help@example.org>', 'Subject: Fwd: failure notice', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="f"', '',
    '--f', 'Content-Type: text/plain', '', 'See below, this came back.', '--f', 'Content-Type: message/rfc822', '', QMAIL, '--f--', '',
  ].join('\r\n');
  const d = await decodeInbound(forwarded);
  t.match(d, { kind: 'bounce', format: 'qmail (forwarded)' });
  if (d.kind === 'bounce') t.match(dsnVerdict(d.report, 'ann@example.org'), { kind: 'failed', bounceClass: 'hard', reason: 'userunknown', status: '5.1.1' });
});

t.test('a DSN whose MIME structure is damaged is read from its text', async (t) => {
  // The boundary parameter on an unfolded line: mailparser sees one part and no delivery-status.
  const damaged = [
    'From: MAILER-DAEMON@mx.example.org', 'Subject: Undelivered Mail Returned to Sender', 'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status;', 'boundary="d"', '',
    '--d', 'Content-Type: text/plain', '', 'Your message could not be delivered.', '',
    '--d', 'Content-Type: message/delivery-status', '', 'Reporting-MTA: dns; mx.example.org', '',
    'Final-Recipient: rfc822; ann@example.org', 'Action: failed', 'Status: 5.2.2', 'Diagnostic-Code: smtp; 552 5.2.2 Mailbox full', '', '--d--', '',
  ].join('\r\n');
  const d = await decodeInbound(damaged);
  t.match(d, { kind: 'bounce', format: /^RFC3464/ });
  if (d.kind === 'bounce') t.match(dsnVerdict(d.report, 'ann@example.org'), { kind: 'failed', bounceClass: 'soft', reason: 'mailboxfull' });
});

t.test('Action: expired is a failure (the MTA gave up), soft', async (t) => {
  const { recipients } = parseDeliveryStatus('Reporting-MTA: dns; x\n\nFinal-Recipient: rfc822; ann@example.org\nAction: expired\nStatus: 4.4.7\n');
  t.match(dsnVerdict({ recipients }, 'ann@example.org'), { kind: 'failed', bounceClass: 'soft', reason: 'expired', status: '4.4.7' });
});

t.test("docs/bounces.md's reason table is the one the classifier reads", async (t) => {
  t.equal(generatedReasonPart(readFileSync(REASONS_DOC.file, 'utf8')), reasonTable(), 'run `node dist/domain/bounces/reason-doc.js --write`');
  for (const reason of BOUNCE_REASONS) {
    const hard = classifyFailure({ status: '5.0.0' }, reason);
    if (REASON_TABLE[reason].verdict === 'soft') t.equal(hard.bounceClass, 'soft', `${reason} is soft`);
  }
  t.equal(classifyFailure({ code: 550 }, 'notaccept').bounceClass, 'hard');
  t.equal(classifyFailure({ code: 450 }, 'notaccept').bounceClass, 'soft');
});

/** A text bounce of a family whose own sentence (not a remote reply) names the reason. */
async function ownSentence(raw: string[]): Promise<string> {
  const d = await decodeInbound(raw.join('\r\n'));
  if (d.kind !== 'bounce') return `not a bounce (${d.kind})`;
  const v = dsnVerdict(d.report, 'ann@example.org', true);
  return v.kind === 'failed' ? `${v.bounceClass}:${v.reason}` : v.kind;
}

t.test("a family's own sentences state the reason (qmail-send, Exim's routers, dma)", async (t) => {
  const qmail = (lines: string[]) => [
    'From: MAILER-DAEMON@mx.example.org', 'Subject: failure notice', '',
    'Hi. This is the qmail-send program at mx.example.org.',
    "I'm afraid I wasn't able to deliver your message to the following addresses.", '',
    '<ann@example.org>:', ...lines, '', '--- Below this line is a copy of the message.', '', 'Subject: Hello', '',
  ];
  t.equal(await ownSentence(qmail(["Sorry, I couldn't find any host named example.org. (#4.1.2)"])), 'hard:hostunknown', 'even as #4.1.2');
  t.equal(await ownSentence(qmail(["Sorry, I wasn't able to establish an SMTP connection. (#4.4.1)", "I'm not going to try again; this message has been in the queue too long."])), 'soft:networkerror');
  t.equal(await ownSentence(qmail(['Sorry, the mailbox of this user is over its disk quota exceeded limit. (#5.2.2)'])), 'soft:mailboxfull');
  const exim = (lines: string[]) => [
    'From: Mail Delivery System <Mailer-Daemon@mx.example.org>', 'Subject: Mail delivery failed: returning message to sender', '',
    'This message was created automatically by mail delivery software.', '',
    'A message that you sent could not be delivered to one or more of its', 'recipients. This is a permanent error. The following address(es) failed:', '',
    '  ann@example.org', ...lines.map((l) => `    ${l}`), '', '------ This is a copy of the message, including all the headers. ------', '', 'Subject: Hello', '',
  ];
  t.equal(await ownSentence(exim(['all relevant MX records point to non-existent hosts'])), 'hard:hostunknown');
  t.equal(await ownSentence(exim(['an MX or SRV record indicated no SMTP service'])), 'hard:notaccept');
  t.equal(await ownSentence(exim(['retry timeout exceeded'])), 'soft:expired');
  t.equal(
    await ownSentence(exim(['SMTP error from remote mail server after end of data:', 'host mx.example.org [192.0.2.1]: 550 Unknown user ann@example.org'])),
    'soft:filtered',
    "a quoted remote reply after DATA decides by its own words, not Exim's",
  );
  const dma = (lines: string[]) => [
    'From: MAILER-DAEMON@mx.example.org', 'Subject: Mail delivery failed', '',
    'This is the DragonFly Mail Agent at mx.example.org.', '', 'There was an error delivering your mail to <ann@example.org>.', '',
    ...lines, '', 'Message headers follow.', '', 'Subject: Hello', '',
  ];
  t.equal(await ownSentence(dma(['DNS lookup failure: host example.org not found'])), 'hard:hostunknown');
  t.equal(await ownSentence(dma(['Could not deliver for the last 345600 seconds. Giving up.'])), 'soft:expired');
});

t.test("a local delivery agent's own refusal, quoted after the message was accepted", async (t) => {
  t.equal(c({ diagnostic: "Your message to <ann@x.org> was automatically rejected: Mailbox doesn't exist: ann" }), 'hard:userunknown', 'dovecot');
  t.equal(c({ diagnostic: 'Your message to <ann@x.org> was automatically rejected: Quota exceeded (mailbox for user is full)' }), 'soft:mailboxfull');
  t.equal(c({ code: 550, diagnostic: '550 mail.local: unknown user: ann', command: 'DATA' }), 'hard:userunknown', 'mail.local after DATA');
  t.equal(c({ diagnostic: 'maildrop: Cannot find system user ann' }), 'hard:userunknown');
  t.equal(c({ diagnostic: 'vdelivermail: Sorry, no mailbox here by that name. vpopmail (#5.1.1)' }), 'hard:userunknown');
  t.equal(c({ diagnostic: 'vdelivermail: user does not exist, but will deliver to /home/vpopmail/domains/x.org/postmaster/' }), 'soft:filtered');
  t.equal(c({ diagnostic: 'vdeliver: Invalid or unknown virtual user ann' }), 'hard:userunknown');
  t.equal(c({ diagnostic: 'maildrop: signal 0x09' }), 'soft:mailererror', "an agent's other failure");
  t.equal(c({ code: 550, diagnostic: '550 unknown user ann', command: 'DATA' }), 'soft:filtered', 'a remote server, not an agent: filtered after DATA');
});
