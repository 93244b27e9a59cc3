import t from 'tap';
import { classifyFailure, smtpCommand } from '../engines/bounces/reason.js';
import { decodeOutcome } from './helpers/bounce-corpus.js';
import { dsnReport } from './helpers/dsn-report.js';

/**
 * The reasons the reference analyser (Sisimai) gives where Cartero used to differ (issue 40):
 * content filters are soft, a server's own bare 5.0.0 "user unknown" is hard, a 5.4.4 whose
 * words are a DNS or routing failure is `networkerror` (soft), a system error DSN whose Action
 * is missing or not RFC 3464's is still applied, and a Gmail notice that gave up is a bounce.
 * Messages written by hand in the shape of real ones (docs/bounces.md cites the sources).
 */
const reply = (status: string, code: number | undefined, diagnostic: string) =>
  classifyFailure({ status, code, diagnostic, action: 'failed', command: smtpCommand(diagnostic) });

t.test('a content or policy filter that quotes "no such user" is filtered (soft)', async (t) => {
  t.match(reply('5.7.1', 550, '550 5.7.1 Message rejected by content filter: recipient does not exist or is blocked'), { reason: 'filtered', bounceClass: 'soft' });
  t.match(reply('5.7.1', 554, '554 5.7.1 <a@example.jp>: Recipient address rejected: Message filtered. Please see our policy'), { reason: 'filtered', bounceClass: 'soft' });
  // The same words answered to RCPT TO stay the mailbox's.
  t.match(reply('5.1.1', 550, '550 5.1.1 <a@example.jp>: Recipient address rejected: User unknown in local recipient table (in reply to RCPT TO command)'), { reason: 'userunknown', bounceClass: 'hard' });
});

t.test("a server's own bare 5.0.0 with user-unknown words is userunknown (hard)", async (t) => {
  t.match(reply('5.0.0', 550, '550 5.0.0 <a@example.jp>... User unknown'), { reason: 'userunknown', bounceClass: 'hard' });
  t.match(reply('5.0.0', 550, '550 5.0.0 a@example.jp: no such user'), { reason: 'userunknown', bounceClass: 'hard' });
  // A relaying MTA's Status: 5.0.0 over a terse quoted reply: the reference reads a filter's refusal.
  t.match(reply('5.0.0', 550, '550 : User unknown'), { reason: 'filtered', bounceClass: 'soft' });
  // After DATA: the address was accepted, the message refused.
  t.match(reply('5.0.0', 550, '>>> DATA\n<<< 550 Unknown user a@example.jp\n554 5.0.0 Service unavailable'), { reason: 'filtered', bounceClass: 'soft' });
});

t.test('host unknown or a missing domain behind a bare 5.0.0 is hostunknown (hard)', async (t) => {
  t.match(reply('5.0.0', 550, '550 5.0.0 <a@example.jp>... Host unknown (Name server: example.jp: host not found)'), { reason: 'hostunknown', bounceClass: 'hard' });
  t.match(reply('5.0.0', 550, '550 5.0.0 Domain not found'), { reason: 'hostunknown', bounceClass: 'hard' });
});

t.test('a 5.4.4 whose words are a DNS or routing failure is networkerror (soft)', async (t) => {
  t.match(reply('5.4.4', undefined, 'Unrouteable mail domain'), { reason: 'networkerror', bounceClass: 'soft' });
  t.match(reply('5.4.4', 550, '550 5.4.4 DNS records for the destination computer could not be found'), { reason: 'networkerror', bounceClass: 'soft' });
  t.match(reply('5.4.4', undefined, 'Host or domain name not found. Name service error for name=example.jp type=AAAA: Host not found, try again'), { reason: 'networkerror', bounceClass: 'soft' });
  // A 5.4.4 that says nothing of the network keeps the status's meaning: the domain does not route.
  t.match(reply('5.4.4', 554, '554 5.4.4 SMTPSEND.DNS.NonExistentDomain; nonexistent domain'), { reason: 'hostunknown', bounceClass: 'hard' });
});

const dsn = (fields: string[], human = 'The following message could not be delivered.') =>
  dsnReport({
    from: 'Mail Delivery System <MAILER-DAEMON@mx.example.jp>',
    subject: 'Undelivered Mail Returned to Sender',
    perMessage: ['Reporting-MTA: dns; mx.example.jp'],
    fields,
    human,
    originalTo: 'a@example.jp',
  });

t.test('a system error DSN is applied as a soft bounce whatever its Action field says', async (t) => {
  const missing = await decodeOutcome(dsn(['Final-Recipient: rfc822; a@example.jp', 'Status: 5.3.0', 'Diagnostic-Code: smtp; 554 5.3.0 Internal error, mail system failure']));
  t.match(missing, { outcome: 'soft', reason: 'systemerror' }, 'no Action field beside a 5.x.x status: failed');
  const odd = await decodeOutcome(dsn(['Final-Recipient: rfc822; a@example.jp', 'Action: undeliverable', 'Status: 5.3.5', 'Diagnostic-Code: smtp; 553 5.3.5 system config error']));
  t.match(odd, { outcome: 'soft', reason: 'systemerror' }, '"Action: undeliverable": failed');
  const failure = await decodeOutcome(dsn(['Final-Recipient: rfc822; a@example.jp', 'Action: failure', 'Status: 5.0.0', 'Diagnostic-Code: smtp; 550 5.0.0 System error']));
  t.match(failure, { outcome: 'soft', reason: 'systemerror' }, '"Action: failure" is failed');
  const delivered = await decodeOutcome(dsn(['Final-Recipient: rfc822; a@example.jp', 'Action: deliverable', 'Status: 2.0.0']));
  t.equal(delivered.outcome, 'none', '"Action: deliverable" is a delivery, not a bounce');
});

const gmail = (body: string[]) =>
  Buffer.from(
    [
      'From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>',
      'To: bounce+x@send.example',
      'Subject: Delivery Status Notification (Failure)',
      'Content-Type: text/plain; charset=UTF-8',
      '',
      'This is an automatically generated Delivery Status Notification',
      '',
      ...body,
      '',
      '----- Original message -----',
      '',
      'From: News <news@send.example>',
      'To: a@example.jp',
      'Subject: Hello',
      '',
      'Hello',
      '',
    ].join('\r\n'),
  );

t.test('a Gmail notice that gave up is a bounce (expired), not a delay', async (t) => {
  const gaveUp = await decodeOutcome(
    gmail([
      'Delivery to the following recipient has been delayed:',
      '',
      '     a@example.jp',
      '',
      'Technical details of temporary failure:',
      'Message expired: the recipient server did not accept our requests to connect for 3 days. Delivery will not be retried.',
    ]),
  );
  t.match(gaveUp, { outcome: 'soft', reason: 'expired' });
  const permanent = await decodeOutcome(
    gmail([
      'Delivery to the following recipient failed permanently:',
      '',
      '     a@example.jp',
      '',
      'Technical details of permanent failure:',
      'The recipient server did not accept our requests to connect. Learn more at https://support.google.com/mail/answer/7720',
      '[(0) example.jp. [192.0.2.1]:25: socket error]',
    ]),
  );
  t.match(permanent, { outcome: 'soft', reason: 'expired' }, "Gmail's own words for a queue that gave up connecting");
  const dns = await decodeOutcome(
    gmail(['Delivery to the following recipient failed permanently:', '', '     a@example.jp', '', 'Technical details of permanent failure:', 'DNS Error: Domain name not found']),
  );
  t.match(dns, { outcome: 'hard', reason: 'hostunknown' });
  const stillTrying = await decodeOutcome(
    gmail([
      'THIS IS A WARNING MESSAGE ONLY.',
      '',
      'YOU DO NOT NEED TO RESEND YOUR MESSAGE.',
      '',
      'Delivery to the following recipient has been delayed:',
      '',
      '     a@example.jp',
      '',
      'Message will be retried for 2 more day(s)',
    ]),
  );
  t.equal(stillTrying.outcome, 'delay', 'a warning that Gmail keeps trying stays a delay');
});
