import t from 'tap';
import { providerOf, type ReportHosts } from '../engines/bounces/providers.js';
import { classifyFailure, smtpCommand } from '../engines/bounces/reason.js';
import { outcomeOfError } from '../engines/bounces/smtp-reply.js';
import { decodeOutcome } from './helpers/bounce-corpus.js';
import { dsnReport } from './helpers/dsn-report.js';

/**
 * The large receiving providers' own texts (engines/bounces/providers.ts), read as the reference
 * analyser's per-provider modules read them, and only when the report is about that provider.
 * Every message is written by hand in the shape of the providers' published error texts
 * (docs/bounces.md cites the pages); none is a corpus sample.
 */
const at = (hosts: ReportHosts, status: string | undefined, code: number | undefined, diagnostic: string) =>
  classifyFailure({ ...(status ? { status } : {}), code, diagnostic, action: 'failed', command: smtpCommand(diagnostic), hosts });

t.test('which provider a report is about', async (t) => {
  t.equal(providerOf({ recipient: 'a@hotmail.co.uk' })?.name, 'microsoft', 'a consumer domain');
  t.equal(providerOf({ recipient: 'a@example.org', remoteMta: 'example-org.mail.protection.outlook.com' })?.name, 'microsoft', 'a Microsoft 365 MX');
  t.equal(providerOf({ recipient: 'a@example.org', reportingMta: 'BAY004-MC1F22.hotmail.com' })?.name, 'microsoft', 'the reporting MTA when no remote MTA is named');
  t.equal(providerOf({ recipient: 'a@example.org', remoteMta: 'mx.example.org', reportingMta: 'BAY004-MC1F22.hotmail.com' }), undefined, "a provider relaying another server's reply is not that server");
  t.equal(providerOf({ recipient: 'a@example.org', remoteMta: 'mta7.am0.yahoodns.net [67.195.204.72]' })?.name, 'yahoo');
  t.equal(providerOf({ recipient: 'a@aol.com' })?.name, 'yahoo');
  t.equal(providerOf({ recipient: 'a@example.org', reportingMta: 'server-7.bemta-12.messagelabs.com' })?.name, 'messagelabs');
  t.equal(providerOf({ recipient: 'a@example.org', remoteMta: 'notoutlook.com.example.net' }), undefined, 'a name that only contains a provider domain');
  t.equal(providerOf({ recipient: 'a@example.org' }), undefined);
});

t.test("Outlook.com's mailbox unavailable is an unknown recipient (hard), there and only there", async (t) => {
  const words = '550 Requested action not taken: mailbox unavailable (-1234567890:1234:-2147467259)';
  t.match(at({ recipient: 'a@outlook.com' }, '5.5.0', 550, words), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at({ recipient: 'a@example.org', reportingMta: 'DM6NAM12HT123.mail.protection.outlook.com' }, '5.5.0', 550, words), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at({ recipient: 'a@outlook.com' }, '5.5.0', 550, `${words} (in reply to end of DATA command)`), { bounceClass: 'soft' }, 'after DATA the message, not the address, was refused');
  t.match(at({ recipient: 'a@example.org', remoteMta: 'mx.example.org' }, '5.5.0', 550, words), { bounceClass: 'soft' }, 'another server writing the same RFC 5321 text keeps the generic reading');
});

t.test('Microsoft: Exchange Online and Outlook.com postmaster texts', async (t) => {
  const m365 = { recipient: 'a@contoso.example', remoteMta: 'contoso-example.mail.protection.outlook.com' };
  t.match(at(m365, '5.7.515', 550, "550 5.7.515 Access denied, sending domain EXAMPLE.JP doesn't meet the required authentication level."), { reason: 'authfailure', bounceClass: 'soft' });
  t.match(at(m365, '5.7.509', 550, '550 5.7.509 Access denied, sending domain [example.jp] does not pass DMARC verification and has a DMARC policy of reject.'), { reason: 'authfailure' });
  t.match(at(m365, '5.7.505', 550, '550 5.7.505 Access denied, banned recipient'), { reason: 'suspend', bounceClass: 'soft' });
  t.match(at(m365, '5.7.606', 550, '550 5.7.606 Access denied, banned sending IP [192.0.2.25]. To request removal from this list please visit https://sender.office.com/'), { reason: 'blocked' });
  t.match(at(m365, '5.1.10', 550, '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at({ recipient: 'a@hotmail.com' }, '5.7.1', 550, '550 5.7.1 Unfortunately, messages from [192.0.2.25] weren\'t sent. Please contact your Internet service provider since part of their network is on our block list (S3150).'), { reason: 'blocked' });
  t.match(at({ recipient: 'a@live.com' }, undefined, 421, '421 RP-001 (BAY004-MC1F22) Unfortunately, some messages from 192.0.2.25 weren\'t sent. Please try again.'), { reason: 'badreputation' });
  t.match(at({ recipient: 'a@live.com' }, undefined, 550, '550 SC-002 (BAY004-MC1F22) Unfortunately, messages from 192.0.2.25 weren\'t sent. Please contact your Internet service provider.'), { reason: 'policyviolation' });
  t.match(at({ recipient: 'a@hotmail.fr' }, '5.7.508', 550, '550 5.7.508 Access denied, [192.0.2.25] has exceeded permitted limits within 2a01::/48 range'), { reason: 'speeding' });
});

t.test('Yahoo and AOL', async (t) => {
  const y = { recipient: 'a@yahoo.com', remoteMta: 'mta6.am0.yahoodns.net' };
  t.match(at(y, '5.0.0', 554, "554 delivery error: dd This user doesn't have a yahoo.com account (a@yahoo.com) [0] - mta1234.mail.ne1.yahoo.com"), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at(y, '5.0.0', 554, '554 delivery error: dd Sorry your message to a@yahoo.com cannot be delivered. This mailbox is disabled (554.30). - mta1234'), { reason: 'suspend', bounceClass: 'soft' });
  t.match(at(y, '4.7.0', 421, '421 4.7.0 [TSS04] Messages from 192.0.2.25 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes (in reply to MAIL FROM command)'), { reason: 'rejected' });
  t.match(at(y, '5.7.9', 550, '550 5.7.9 This mail has been blocked because the sender is unauthenticated. Yahoo requires all senders to authenticate with either SPF or DKIM.'), { reason: 'authfailure' });
  t.match(at(y, '5.7.9', 554, '554 5.7.9 Message not accepted for policy reasons.  See https://postmaster.yahooinc.com/error-codes'), { reason: 'policyviolation' });
  t.match(at(y, '5.7.1', 553, "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.25, because the ip is in Spamhaus's list; see https://postmaster.yahooinc.com/error-codes"), { reason: 'blocked' });
});

t.test('Gmail and Google Workspace', async (t) => {
  const g = { recipient: 'a@gmail.com', remoteMta: 'gmail-smtp-in.l.google.com' };
  t.match(at(g, '5.2.1', 550, '550-5.2.1 The email account that you tried to reach is inactive. For more information, go to https://support.google.com/mail/?p=DisabledUser'), { reason: 'suspend', bounceClass: 'soft' });
  t.match(at(g, '5.1.1', 550, "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos"), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at(g, '5.7.26', 550, "550-5.7.26 Unauthenticated email from example.jp is not accepted due to domain's DMARC policy."), { reason: 'authfailure' });
  t.match(at(g, '4.7.28', 421, '421-4.7.28 Gmail has detected an unusual rate of mail originating from your IP address'), { reason: 'blocked' });
  t.match(at(g, '5.7.1', 550, '550-5.7.1 Our system has detected that this message is likely unsolicited mail.'), { reason: 'spamdetected' });
  t.match(at(g, '5.7.25', 550, '550-5.7.25 The IP address sending this message does not have a PTR record setup'), { reason: 'requireptr' });
});

t.test('Cox, Orange, I.UA, Mimecast, iCloud, KDDI au', async (t) => {
  t.match(at({ recipient: 'a@cox.net' }, '5.7.1', 554, '554 5.7.1 AUP#CXBL 192.0.2.25 has been blocked. Please visit https://www.cox.com/aupblock'), { reason: 'blocked' });
  t.match(at({ recipient: 'a@cox.net' }, undefined, 550, '550 <a@cox.net> recipient rejected'), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at({ recipient: 'a@orange.fr' }, '5.1.1', 550, '550 5.1.1 Adresse d au moins un destinataire invalide. Invalid recipient. OFR_416 [416]'), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at({ recipient: 'a@wanadoo.fr' }, '5.1.1', 552, '552 5.1.1 Boite du destinataire pleine. Recipient overquota. OFR_417 [417]'), { reason: 'mailboxfull', bounceClass: 'soft' });
  t.match(at({ recipient: 'a@laposte.net' }, '5.5.0', 550, '550 5.5.0 Boite du destinataire archivee. Archived recipient. LPN007_420'), { reason: 'suspend', bounceClass: 'soft' });
  t.match(at({ recipient: 'a@i.ua' }, undefined, 550, '550 Mailbox is frozen. See http://mail.i.ua/err/3/'), { reason: 'suspend' });
  t.match(at({ recipient: 'a@example.org', remoteMta: 'eu-smtp-inbound-1.mimecast.com' }, undefined, 550, '550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550'), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(at({ recipient: 'a@example.org', remoteMta: 'eu-smtp-inbound-1.mimecast.com' }, undefined, 550, '550 Administrative prohibition envelope blocked - https://community.mimecast.com/docs/DOC-1369#550'), { reason: 'rejected' });
  t.match(at({ recipient: 'a@icloud.com' }, '5.1.6', 550, '550 5.1.6 recipient no longer on server: a@icloud.com'), { reason: 'hasmoved', bounceClass: 'hard' });
  t.match(at({ recipient: 'a@ezweb.ne.jp' }, '5.0.0', 550, '550 : User unknown'), { reason: 'filtered', bounceClass: 'soft' });
  t.match(at({ recipient: 'a@ezweb.ne.jp' }, '5.0.0', 550, '550 <a@ezweb.ne.jp>: User unknown'), { reason: 'userunknown', bounceClass: 'hard' });
});

t.test('a sender-side status stays rejected, whatever the provider', async (t) => {
  t.match(at({ recipient: 'a@orange.fr' }, '5.1.8', 501, '501 5.1.8 Emetteur invalide. Invalid Sender. OFR004_405 [405] (in reply to MAIL FROM command)'), { reason: 'rejected', bounceClass: 'soft' });
});

const dsn = (from: string, perMessage: string[], fields: string[], human = 'I was unable to deliver your message to the following addresses.') =>
  dsnReport({ from: `Mail Delivery System <${from}>`, subject: 'Mail Delivery Failure', perMessage, fields, human, originalTo: 'a@example.net' });

t.test("whole reports: the reporting MTA's provider reads its own words", async (t) => {
  const symantec = await decodeOutcome(
    dsn('MAILER-DAEMON@messagelabs.com', ['Reporting-MTA: dns; server-12.bemta-3.messagelabs.com'], [
      'Action: failed',
      'Final-Recipient: rfc822; a@example.net',
      'Diagnostic-Code: smtp; 542 a@example.net Rejected',
      'Status: 5.0.0',
    ]),
  );
  t.match(symantec, { outcome: 'hard', reason: 'userunknown' }, "Email Security.cloud's 542 Rejected");
  const outlook = await decodeOutcome(
    dsn('postmaster@outlook.com', ['Reporting-MTA: dns;DB8EUR01HT123.eop-eur01.prod.protection.outlook.com'], [
      'Final-Recipient: rfc822;a@example.net',
      'Action: failed',
      'Status: 5.5.0',
      'Diagnostic-Code: smtp;550 Requested action not taken: mailbox unavailable (-2147467259:12345:-2147467259)',
    ]),
  );
  t.match(outlook, { outcome: 'hard', reason: 'userunknown' });
  const relayed = await decodeOutcome(
    dsn('postmaster@outlook.com', ['Reporting-MTA: dns;DB8EUR01HT123.eop-eur01.prod.protection.outlook.com'], [
      'Final-Recipient: rfc822;a@example.net',
      'Action: failed',
      'Status: 5.5.0',
      'Remote-MTA: dns;mx.example.net',
      'Diagnostic-Code: smtp;550 Requested action not taken: mailbox unavailable',
    ]),
  );
  t.match(relayed, { outcome: 'soft' }, "Outlook relaying another server's reply: that server's words, read generically");
});

t.test("Yahoo's notice quoting a reply that names the refused address answered RCPT TO", async (t) => {
  const raw = Buffer.from(
    [
      'From: MAILER-DAEMON@yahoo.com',
      'To: bounce+x@send.example',
      'Subject: Failure Notice',
      'Content-Type: text/plain; charset=UTF-8',
      '',
      'Sorry, we were unable to deliver your message to the following address.',
      '',
      '<a@example.net>:',
      '550: <a@example.net>: User unknown',
      '',
      '--- Below this line is a copy of the message.',
      '',
      'From: News <news@send.example>',
      'To: a@example.net',
      'Subject: Hello',
      '',
    ].join('\r\n'),
  );
  t.match(await decodeOutcome(raw), { outcome: 'hard', reason: 'userunknown' });
});

t.test('the send worker reads the recipient domain too', async (t) => {
  const inactive = { responseCode: 550, response: '550-5.2.1 The email account that you tried to reach is inactive. For more information, go to https://support.google.com/mail/?p=DisabledUser', command: 'RCPT TO' };
  t.match(outcomeOfError(inactive, 'a@gmail.com'), { kind: 'bounced', bounceClass: 'soft', reason: 'suspend' });
  const cox = { responseCode: 554, response: '554 AUP#CXSNDR rejected. Please visit https://www.cox.com/aupblock', command: 'RCPT TO' };
  t.match(outcomeOfError(cox, 'a@cox.net'), { kind: 'bounced', bounceClass: 'soft', reason: 'authfailure' }, "Cox's code for a sender that failed SPF/DKIM");
  const other = outcomeOfError(cox, 'a@example.org');
  t.not(other.kind === 'bounced' && other.reason, 'authfailure', "another domain's server: Cox's codes are not read");
});
