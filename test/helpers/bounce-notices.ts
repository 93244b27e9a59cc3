/**
 * Bounce notices written for the format tests in the layout of their formats, where the corpus
 * has too few of a family (test/bounce-formats.test.ts reads them): Apache James's error notices
 * (engines/bounces/formats/apachejames.ts) and mailing-list refusals (engines/bounces/formats/fml.ts).
 */

/** One written notice and what its format module must make of it. */
export interface WrittenNotice {
  /** The format module that must read it (the decoded `format`). */
  format: 'ApacheJames' | 'FML';
  name: string;
  raw: string;
  /** The report's recipients: exactly these, in order, or each matching the pattern (at least one). */
  recipients: string[] | RegExp;
  /** Why those recipients and no others: the assertion's message. */
  recipientsAre: string;
  outcome: 'hard' | 'soft';
  /** Why that outcome, when the row's format has a rule for it: the assertion's message. */
  outcomeBecause?: string;
  /** The verdict's reason. */
  reason: string;
  /** The reason the format states for every recipient (formats/fml.ts), when it states one. */
  stated?: string;
}

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

/**
 * Apache James's notices of an error in the mail server: plain text, no delivery-status part,
 * the error above "Message details:", the recipients on `RCPT TO:` lines. The error's words
 * decide the reason; a bare system error is soft.
 */
const RCPT_TO = 'the RCPT TO addresses, not the sender on MAIL FROM or From';
export const JAMES_NOTICES: WrittenNotice[] = [
  {
    format: 'ApacheJames',
    name: 'an unknown user, the notice alone',
    raw: jamesNotice({ error: ['550 - Requested action not taken: no such user here'], recipients: ['ann@example.org'] }),
    recipients: ['ann@example.org'],
    recipientsAre: RCPT_TO,
    outcome: 'hard',
    reason: 'userunknown',
  },
  {
    format: 'ApacheJames',
    name: 'a bare system error (a Java exception), the original attached, from the server itself',
    raw: jamesNotice({
      error: ['Exception in mailet RemoteDelivery: java.lang.NullPointerException', '  at org.apache.james.transport.mailets.RemoteDelivery.service'],
      recipients: ['bob@example.org'],
      from: 'james@mx.example.org',
      subject: 'Notice',
      attached: true,
    }),
    recipients: ['bob@example.org'],
    recipientsAre: RCPT_TO,
    outcome: 'soft',
    reason: 'systemerror',
  },
  {
    format: 'ApacheJames',
    name: 'a full mailbox for two recipients, an own lead line',
    raw: jamesNotice({
      lead: 'Your message could not be handled by the mail server.',
      error: ['452 4.2.2 Mailbox full, try again later'],
      recipients: ['cay@example.org', 'dan@example.org'],
      attached: true,
    }),
    recipients: ['cay@example.org', 'dan@example.org'],
    recipientsAre: RCPT_TO,
    outcome: 'soft',
    reason: 'mailboxfull',
  },
];

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

/**
 * Mailing-list software refusing a post: fml's error notices (English and Japanese, with and
 * without the original) and another list manager's refusal, each a soft bounce of the list's
 * address with the reason the format states (the verdict shows it when the classifier finds
 * none in the words).
 */
const LIST = {
  recipients: /elist@(?:lists\.example\.jp|groups\.example\.net)|elist-ctl@/,
  recipientsAre: 'the recipient is the list it names in angle brackets, not its help address or the sender',
  outcome: 'soft',
  outcomeBecause: 'soft: the list refused the post, its address is alive',
} as const;
export const LIST_NOTICES: WrittenNotice[] = [
  {
    format: 'FML',
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
    ...LIST,
    stated: 'rejected',
    reason: 'rejected',
  },
  {
    format: 'FML',
    name: 'fml, Japanese (UTF-8): a post from a non-member, without the original',
    raw: fmlNotice({
      subject: 'NOT MEMBER article from news@send.example (elist ML)',
      charset: 'utf-8',
      original: false,
      body: ['このメーリングリスト <elist@lists.example.jp> のメンバーではないため、', 'あなたのメールは配送されませんでした。', '案内が必要なら elist-ctl@lists.example.jp へ guide と書いて送ってください。'],
    }),
    ...LIST,
    stated: 'rejected',
    reason: 'rejected',
  },
  {
    format: 'FML',
    name: 'fml 8 (X-ML-Server): a loop detected, the mail held back',
    raw: fmlNotice({
      subject: 'Loop Alert: elist ML',
      headers: ['X-ML-Server: fml [fml 8.0 (2026/01/01)]'],
      body: ['The list server for <elist@lists.example.jp> found this mail had already passed through it', 'and stopped it to break a mail loop.'],
    }),
    ...LIST,
    stated: 'systemerror',
    reason: 'systemerror',
  },
  {
    format: 'FML',
    name: 'fml: a command mail refused by its security check',
    raw: fmlNotice({
      subject: 'Security Alert (elist ML)',
      body: ['Security alert: a command in your mail to <elist-ctl@lists.example.jp> matched a forbidden pattern,', 'so it was not run.'],
    }),
    ...LIST,
    stated: 'securityerror',
    reason: 'securityerror',
  },
  { format: 'FML', name: 'another list manager: a non-subscriber post refused, the original attached', raw: otherList, ...LIST, stated: 'rejected', reason: 'rejected' },
];

/** Another MTA's "system error" notice, no status, in English and Japanese: read by x-generic.ts as a failure, not "nothing". */
export const SYSTEM_ERROR_NOTICES: Array<{ language: string; raw: string }> = [
  {
    language: 'English',
    raw: [
      'From: MAILER-DAEMON@mx.example.net',
      'To: bounce+x@send.example',
      'Subject: Mail System Notice',
      '',
      'A system error occurred while handling your mail for <eve@example.net>.',
      '',
    ].join('\r\n'),
  },
  {
    language: 'Japanese',
    raw: [
      'From: MAILER-DAEMON@mx.example.ne.jp',
      'To: bounce+x@send.example',
      'Subject: =?UTF-8?B?' + Buffer.from('メールシステムからのお知らせ').toString('base64') + '?=',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('システム障害のため、<eve@example.ne.jp> 宛のメールを配信できませんでした。').toString('base64'),
      '',
    ].join('\r\n'),
  },
];

/** A list's administrative mail that refuses nothing: no bounce. */
export const LIST_MODERATION_NOTICE = [
  'From: elist-owner@groups.example.net',
  'To: news@send.example',
  'Subject: Your message to elist awaits moderator approval',
  'List-Id: <elist.groups.example.net>',
  '',
  'Your mail to <elist@groups.example.net> is being held until the list moderator can review it.',
  '',
].join('\r\n');
