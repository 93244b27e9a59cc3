import t from 'tap';
import { decodeInbound } from '../engines/bounces/formats/index.js';
import { decodeOutcome } from './helpers/bounce-corpus.js';
import { noticeListener } from './helpers/notice-listener.js';

/**
 * Apache James's notices of an error in the mail server (formats/apachejames.ts): plain text, no
 * delivery-status part, the error above "Message details:", the recipients on `RCPT TO:` lines.
 * The error's words decide the reason; a bare system error is soft. Also another MTA's "system
 * error" notice read by x-generic.ts, in English and Japanese: a failure, not "nothing".
 * Samples written for this test in the formats' layout.
 */

const listener = await noticeListener(t, 'formatjames');

function jamesNotice(opts: { error: string[]; recipients: string[]; from?: string; subject?: string; attached?: boolean; lead?: string }): string {
  const details = [
    'Message details:',
    '  Subject: Hello',
    '  Sent date: Tue Mar 03 10:12:29 UTC 2026',
    '  MAIL FROM: bounce+x@send.example',
    ...opts.recipients.map((r) => `  RCPT TO: ${r}`),
    '  From: News <news@send.example>',
    `  To: ${opts.recipients.join(', ')}`,
    '  Size (in bytes): 452',
    '  Number of lines: 12',
  ];
  const text = [opts.lead ?? 'We were unable to deliver the attached message because of an error in the mail server.', '', 'Error message below:', ...opts.error, '', ...details].join('\r\n');
  const head = [
    `From: ${opts.from ?? 'postmaster@mx.example.org'}`,
    'To: bounce+x@send.example',
    `Subject: ${opts.subject ?? '[BOUNCE]'}`,
    'Message-ID: <31337.1772532750.JavaMail.james@mx.example.org>',
    'Date: Tue, 03 Mar 2026 10:12:30 +0000',
    'MIME-Version: 1.0',
  ];
  if (!opts.attached) return [...head, 'Content-Type: text/plain; charset=us-ascii', '', text, ''].join('\r\n');
  return [
    ...head,
    'Content-Type: multipart/mixed; boundary="jb"',
    '',
    '--jb',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    text,
    '--jb',
    'Content-Type: message/rfc822',
    '',
    'From: News <news@send.example>',
    `To: ${opts.recipients.join(', ')}`,
    'Subject: Hello',
    '',
    'Hello',
    '--jb--',
    '',
  ].join('\r\n');
}

const samples: Array<{ name: string; raw: string; recipients: string[]; outcome: 'hard' | 'soft'; reason: string }> = [
  {
    name: 'an unknown user, the notice alone',
    raw: jamesNotice({ error: ['550 - Requested action not taken: no such user here'], recipients: ['ann@example.org'] }),
    recipients: ['ann@example.org'],
    outcome: 'hard',
    reason: 'userunknown',
  },
  {
    name: 'a bare system error (a Java exception), the original attached, from the server itself',
    raw: jamesNotice({
      error: ['Exception in mailet RemoteDelivery: java.lang.NullPointerException', '  at org.apache.james.transport.mailets.RemoteDelivery.service'],
      recipients: ['bob@example.org'],
      from: 'james@mx.example.org',
      subject: 'Notice',
      attached: true,
    }),
    recipients: ['bob@example.org'],
    outcome: 'soft',
    reason: 'systemerror',
  },
  {
    name: 'a full mailbox for two recipients, an own lead line',
    raw: jamesNotice({
      lead: 'Your message could not be handled by the mail server.',
      error: ['452 4.2.2 Mailbox full, try again later'],
      recipients: ['cay@example.org', 'dan@example.org'],
      attached: true,
    }),
    recipients: ['cay@example.org', 'dan@example.org'],
    outcome: 'soft',
    reason: 'mailboxfull',
  },
];

for (const s of samples) {
  t.test(s.name, async (t) => {
    const { decoded, outcome, reason } = await decodeOutcome(Buffer.from(s.raw));
    t.match(decoded, { kind: 'bounce', format: 'ApacheJames' });
    if (decoded.kind !== 'bounce') return;
    t.same(decoded.report.recipients.map((r) => r.finalRecipient), s.recipients, 'the RCPT TO addresses, not the sender on MAIL FROM or From');
    t.equal(outcome, s.outcome);
    t.equal(reason, s.reason);
  });
}

t.test("another MTA's system error notice, no status, is a failure (x-generic), in English and Japanese", async (t) => {
  const english = [
    'From: MAILER-DAEMON@mx.example.net',
    'To: bounce+x@send.example',
    'Subject: Mail System Notice',
    '',
    'A system error occurred while handling your mail for <eve@example.net>.',
    '',
  ].join('\r\n');
  const japanese = [
    'From: MAILER-DAEMON@mx.example.ne.jp',
    'To: bounce+x@send.example',
    'Subject: =?UTF-8?B?' + Buffer.from('メールシステムからのお知らせ').toString('base64') + '?=',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('システム障害のため、<eve@example.ne.jp> 宛のメールを配信できませんでした。').toString('base64'),
    '',
  ].join('\r\n');
  for (const raw of [english, japanese]) {
    const decoded = await decodeInbound(raw);
    t.match(decoded, { kind: 'bounce', format: 'other text bounce' });
    const { outcome } = await decodeOutcome(Buffer.from(raw));
    t.equal(outcome, 'soft', 'no status, no dead-address words: soft');
  }
});

t.test('through the listener: the notice bounces the mail to its RCPT TO address', async (t) => {
  const { mailId, verp } = await listener.sentMail('ann@example.org');
  t.match(await listener.deliver(verp, samples[0]!.raw), /^250/);
  t.same(await listener.state(mailId), { status: 6, bounce_class: 'hard', reason: 'userunknown' });
  const second = await listener.sentMail('bob@example.org');
  t.match(await listener.deliver(second.verp, samples[1]!.raw), /^250/);
  t.same(await listener.state(second.mailId), { status: 6, bounce_class: 'soft', reason: 'systemerror' });
});
