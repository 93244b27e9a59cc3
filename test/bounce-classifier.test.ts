import t from 'tap';
import { dsnVerdict, parseDeliveryStatus } from '../domain/bounces/dsn.js';
import { decodeInbound } from '../domain/bounces/formats/index.js';
import { classifyFailure, smtpCommand } from '../domain/bounces/reason.js';
import { qmailBounce } from './helpers/qmail-bounce.js';

/**
 * The bounce classifier's rules (domain/bounces/reason.ts), one by one, on replies written the way
 * servers write them; and the decoder's refusals to see a bounce where there is none.
 */
const c = (facts: Parameters<typeof classifyFailure>[0]) => {
  const r = classifyFailure(facts);
  return `${r.bounceClass}:${r.reason}`;
};

t.test('the words decide before a generic status', async (t) => {
  t.equal(c({ code: 550, status: '5.0.0', diagnostic: '550 5.0.0 Blocked - see https://www.spamcop.net/bl.shtml?192.0.2.1' }), 'soft:blocked');
  t.equal(c({ code: 550, status: '5.0.0', diagnostic: '550 5.0.0 <ann@x.org>... User unknown' }), 'hard:userunknown');
  t.equal(c({ code: 550, status: '5.7.1', diagnostic: '550 5.7.1 Service unavailable; client host [192.0.2.1] blocked using zen.spamhaus.org' }), 'soft:blocked');
  t.equal(c({ code: 550, status: '5.7.26', diagnostic: '550-5.7.26 Unauthenticated email from x.org is not accepted due to domain\'s DMARC policy' }), 'soft:authfailure');
  t.equal(c({ code: 550, status: '5.7.1', diagnostic: '550 5.7.1 Client host rejected: cannot find your reverse hostname' }), 'soft:requireptr');
  t.equal(c({ code: 552, status: '5.2.2', diagnostic: '552 5.2.2 Mailbox full' }), 'soft:mailboxfull');
  t.equal(c({ code: 554, status: '5.7.1', diagnostic: '554 5.7.1 Message rejected as spam by Content Filtering' }), 'soft:spamdetected');
});

t.test('a status that names the reason, when the words do not', async (t) => {
  t.equal(c({ code: 550, status: '5.1.1' }), 'hard:userunknown');
  t.equal(c({ code: 554, status: '5.4.4', diagnostic: '554 5.4.4 unroutable' }), 'hard:hostunknown');
  t.equal(c({ code: 550, status: '5.1.6' }), 'hard:hasmoved');
  t.equal(c({ code: 550, status: '5.1.10', diagnostic: '550 5.1.10 null MX' }), 'hard:notaccept');
  t.equal(c({ code: 552, status: '5.2.2', diagnostic: '552 5.2.2 Requested action not taken: mailbox unavailable' }), 'soft:mailboxfull', 'a full mailbox whose text is a template');
  t.equal(c({ code: 525, status: '5.7.13', diagnostic: '525 5.7.13 <ann@x.org>... User unknown' }), 'soft:suspend');
  t.equal(c({ code: 550, status: '5.2.1', diagnostic: '550 5.2.1 <ann@x.org>... User Unknown' }), 'hard:userunknown', '5.2.1 is written for unknown users as often as for disabled ones');
});

t.test('the sender is never the recipient', async (t) => {
  t.equal(c({ code: 553, status: '5.1.8', diagnostic: '553 5.1.8 <bounce@send.example>: Sender address rejected: Domain not found' }), 'soft:rejected');
  t.equal(c({ code: 550, status: '5.1.0', diagnostic: '550 5.1.0 <bounce@send.example>: Sender address rejected: Domain not found' }), 'soft:rejected', 'by the words, whatever the status');
  t.equal(c({ code: 550, status: '5.1.1', diagnostic: '550 5.1.1 User unknown', command: 'MAIL' }), 'soft:rejected', 'refused at MAIL FROM');
});

t.test('the refused command', async (t) => {
  t.equal(c({ code: 550, diagnostic: '550 Unknown user ann@x.org', command: 'DATA' }), 'soft:filtered', 'accepted at RCPT, refused after DATA');
  t.equal(c({ code: 550, diagnostic: "554 delivery error: dd This user doesn't have a yahoo.com account", command: 'DATA' }), 'hard:userunknown');
  t.equal(smtpCommand('550 Unknown user (in reply to end of DATA\n    command)'), 'DATA');
  t.equal(smtpCommand('SMTP error from remote mail server after MAIL FROM:<a@b> SIZE=1:'), 'MAIL');
  t.equal(smtpCommand('>>> DATA\n<<< 550 5.1.1 <a@b>... User Unknown\n<<< 503 5.0.0 Need RCPT (recipient)'), 'RCPT', 'pipelined: the 550 answered RCPT TO');
  t.equal(smtpCommand('... while talking to mx.example.org.:\n>>> DATA\n<<< 554 delivery error: dd This user doesn\'t have an account'), 'DATA');
});

t.test('temporary failures and bare codes are never hard', async (t) => {
  t.equal(c({ code: 450, status: '4.1.1', diagnostic: '450 4.1.1 user unknown (directory down)' }), 'soft:userunknown');
  t.equal(c({ code: 550, diagnostic: '550 Requested action not taken' }), 'soft:onhold');
  t.equal(c({ code: 551, diagnostic: '551 User not local; please try <ann@y.org>' }), 'hard:hasmoved');
  t.equal(c({ action: 'expired' }), 'soft:expired');
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
