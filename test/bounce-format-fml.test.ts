import t from 'tap';
import { decodeInbound } from '../engines/bounces/formats/index.js';
import { decodeOutcome } from './helpers/bounce-corpus.js';
import { noticeListener } from './helpers/notice-listener.js';

/**
 * Mailing-list software refusing a post (formats/fml.ts): fml's error notices (English and
 * Japanese, with and without the original), another list manager's refusal, each read as a soft
 * bounce of the list's address with the list's reason; a list's administrative mail that refuses
 * nothing stays no bounce. Samples written for this test in the formats' layout.
 */

const listener = await noticeListener(t, 'formatfml');

function fmlNotice(opts: { subject: string; body: string[]; headers?: string[]; original?: boolean; charset?: string }): string {
  const body = opts.body.join('\r\n');
  return [
    'Return-Path: <elist-admin@lists.example.jp>',
    'From: elist-admin@lists.example.jp',
    'To: news@send.example',
    `Subject: ${opts.subject}`,
    'Date: Tue, 03 Mar 2026 10:12:30 +0900',
    'Message-Id: <202603031012.FMLAAC04411.elist@lists.example.jp>',
    'X-ML-Name: elist',
    'X-ML-Info: If you have a question, send "help" to elist-ctl@lists.example.jp',
    ...(opts.headers ?? ['X-MLServer: fml [fml 4.0.3 release (20011202/4.0.3)]']),
    'MIME-Version: 1.0',
    ...(opts.charset ? [`Content-Type: text/plain; charset=${opts.charset}`, 'Content-Transfer-Encoding: base64', '', Buffer.from(body).toString('base64')] : ['Content-Type: text/plain; charset=us-ascii', '', body]),
    ...(opts.original === false
      ? []
      : opts.charset
        ? []
        : ['', 'Original mail as follows:', '', 'From news@send.example  Tue Mar  3 10:12:29 2026', 'Return-Path: <bounce+x@send.example>', 'From: News <news@send.example>', 'To: elist@lists.example.jp', 'Subject: Hello', '', 'Hello']),
    '',
  ].join('\r\n');
}

/**
 * `stated`: the reason the format states for the notice (formats/fml.ts), which the verdict shows
 * when the classifier finds none in the words; `verdict`: the verdict's reason when the words
 * already name one (the classifier decides then: a loop's words, a "forbidden" pattern).
 */
const samples: Array<{ name: string; raw: string; stated: string; verdict?: string }> = [
  {
    name: 'fml 4, English: a post from a non-member, the original quoted',
    raw: fmlNotice({
      subject: 'NOT MEMBER article from news@send.example (elist ML)',
      body: [
        'Your mail was not distributed: you are not a member of this mailing list <elist@lists.example.jp>.',
        '',
        'To read the guide of this list, send a mail whose body is',
        '    guide',
        'to the address',
        '    elist-ctl@lists.example.jp',
      ],
    }),
    stated: 'rejected',
  },
  {
    name: 'fml, Japanese (UTF-8): a post from a non-member, without the original',
    raw: fmlNotice({
      subject: 'NOT MEMBER article from news@send.example (elist ML)',
      charset: 'utf-8',
      original: false,
      body: ['このメーリングリスト <elist@lists.example.jp> のメンバーではないため、', 'あなたのメールは配送されませんでした。', '案内が必要なら elist-ctl@lists.example.jp へ guide と書いて送ってください。'],
    }),
    stated: 'rejected',
  },
  {
    name: 'fml 8 (X-ML-Server): a loop detected, the mail held back',
    raw: fmlNotice({
      subject: 'Loop Alert: elist ML',
      headers: ['X-ML-Server: fml [fml 8.0 (2026/01/01)]'],
      body: ['The list server for <elist@lists.example.jp> found this mail had already passed through it', 'and stopped it to break a mail loop.'],
    }),
    stated: 'systemerror',
  },
  {
    name: 'fml: a command mail refused by its security check',
    raw: fmlNotice({
      subject: 'Security Alert (elist ML)',
      body: ['Security alert: a command in your mail to <elist-ctl@lists.example.jp> matched a forbidden pattern,', 'so it was not run.'],
    }),
    stated: 'securityerror',
  },
];

// Another list manager, its own wording, the original attached as a message part.
const otherList = [
  'From: elist-owner@groups.example.net',
  'To: news@send.example',
  'Subject: Your message to elist was rejected',
  'List-Id: <elist.groups.example.net>',
  'Message-ID: <notice-77@groups.example.net>',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=us-ascii',
  '',
  'Only subscribers may post to <elist@groups.example.net>; your message was refused.',
  '',
  '--b1',
  'Content-Type: message/rfc822',
  '',
  'From: News <news@send.example>',
  'To: elist@groups.example.net',
  'Subject: Hello',
  '',
  'Hello',
  '--b1--',
  '',
].join('\r\n');
samples.push({ name: 'another list manager: a non-subscriber post refused, the original attached', raw: otherList, stated: 'rejected' });

for (const s of samples) {
  t.test(s.name, async (t) => {
    const { decoded, outcome, reason } = await decodeOutcome(Buffer.from(s.raw));
    t.match(decoded, { kind: 'bounce', format: 'FML' });
    if (decoded.kind !== 'bounce') return;
    const list = /elist@(?:lists\.example\.jp|groups\.example\.net)/;
    t.ok(decoded.report.recipients.length >= 1 && decoded.report.recipients.every((r) => list.test(r.finalRecipient ?? '') || /elist-ctl@/.test(r.finalRecipient ?? '')), 'the recipient is the list it names in angle brackets, not its help address or the sender');
    t.equal(outcome, 'soft', 'soft: the list refused the post, its address is alive');
    t.ok(decoded.report.recipients.every((r) => r.reason === s.stated), `the format states ${s.stated}`);
    t.equal(reason, s.verdict ?? s.stated, 'the verdict\'s reason');
  });
}

t.test('a list administrative mail that refuses nothing is no bounce', async (t) => {
  const moderation = [
    'From: elist-owner@groups.example.net',
    'To: news@send.example',
    'Subject: Your message to elist awaits moderator approval',
    'List-Id: <elist.groups.example.net>',
    '',
    'Your mail to <elist@groups.example.net> is being held until the list moderator can review it.',
    '',
  ].join('\r\n');
  const decoded = await decodeInbound(moderation);
  t.not(decoded.kind, 'bounce');
});

t.test('through the listener: fml refusing our post bounces the mail sent to the list, soft', async (t) => {
  const { mailId, verp } = await listener.sentMail('elist@lists.example.jp');
  t.match(await listener.deliver(verp, samples[0]!.raw), /^250/);
  t.same(await listener.state(mailId), { status: 6, bounce_class: 'soft', reason: 'rejected' });
});
