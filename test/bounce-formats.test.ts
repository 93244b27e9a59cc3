import t from 'tap';
import { decodeInbound } from '../engines/bounces/formats/index.js';
import { decodeOutcome } from './helpers/bounce-corpus.js';
import { formatCases } from './helpers/bounce-format.js';
import { JAMES_NOTICES, LIST_MODERATION_NOTICE, LIST_NOTICES, SYSTEM_ERROR_NOTICES, type WrittenNotice } from './helpers/bounce-notices.js';
import { noticeListener } from './helpers/notice-listener.js';

/**
 * Every bounce format module, one process for all (each module was a test file of its own, a
 * process started for one table call; issue 38). First the corpus samples of each module's
 * family, a row a module (helpers/bounce-format.ts says what a row checks); then the notices
 * written for the modules the corpus has too few of (helpers/bounce-notices.ts), a row a notice
 * named by its format; then some of those sent to the real inbound listener.
 */

// Before the first subtest: tap may end the root test once its subtests ran.
const listener = await noticeListener(t, 'formats');

const formats: Array<[name: string, cases: Parameters<typeof formatCases>[1]]> = [
  /** Amazon SES: JSON notifications by mail (formats/amazonses.ts) and its RFC 3464 DSNs (the remote reply quoted in SES's diagnostic). */
  ['amazonses', { groups: ['AmazonSES'], format: /^(AmazonSES|RFC3464)$/, minAgreement: 0.9 }],
  /** Amazon WorkMail: DSN fields written as text (formats/amazonworkmail.ts, read by rfc3464.ts's text fallback). */
  ['amazonworkmail', { groups: ['AmazonWorkMail'], format: /^AmazonWorkMail$/ }],
  /** KDDI au (ezweb.ne.jp, dion.ne.jp) bounces (formats/au.ts). */
  ['au', { groups: ['EZweb', 'KDDI'], format: /^au /, shapes: ['other'] }],
  /** Lotus Domino and Notes text bounces (formats/domino.ts). */
  ['domino', { groups: ['Domino', 'Notes'], format: /^Domino$/, shapes: ['other'] }],
  /** DragonFly Mail Agent's bounces (formats/dragonfly.ts). */
  ['dragonfly', { groups: ['DragonFly'], format: /^DragonFly$/ }],
  /** Exchange 2000/2003 non-delivery reports (formats/exchange2003.ts). */
  ['exchange2003', { groups: ['Exchange2003'], format: /^Exchange2003$/ }],
  /** Exim's text bounces and the providers that send them (GMX, 1&1, Orange): formats/exim.ts. */
  ['exim', { groups: ['Exim', 'GMX', 'EinsUndEins', 'rhost:FrancePTT'], format: /^Exim$/, minAgreement: 0.9, shapes: ['other'] }],
  /** Feedback-loop reports (ARF), unsubscribe requests and auto-replies: complaints are recorded (auth-failure reports are read, not recorded: they are no person's complaint), auto-replies change nothing. */
  ['feedback', { groups: ['ARF', 'RFC3834'], format: /^(ARF|auto-reply|unsubscribe request)$/, minAgreement: 0.6 }],
  /** Bounces of MTAs with no module of their own (formats/x-generic.ts; unnamed MTAs that write a known family's sentences are read by it: X2 qmail's, X3 Gmail's; Verizon's vtext.com gateway sends Apache James's error notice, read by apachejames.ts), forwarded reports (inside message/rfc822) and DSNs whose MIME structure is damaged (read from the text).
   * Sisimai's own module for the unnamed MTA X1 reads its "[User unknown]" as filtered (soft); the words say an unknown user. */
  ['generic', { groups: ['X1', 'X2', 'X3', 'X6', 'Biglobe', 'MailMarshalSMTP', 'Verizon', 'Postfix', 'RFC3464', 'MessagingServer'], format: /^(other text bounce|qmail|Gmail|ApacheJames|RFC3464( \(forwarded\)| \(damaged MIME, read as text\))?)$/, minAgreement: 0.85, shapes: ['other'] }],
  /** Gmail's own text bounces and delay warnings (formats/gmail.ts); a delay is recorded as a delay. */
  ['gmail', { groups: ['Gmail'], format: /^Gmail$/ }],
  /** Google Groups refusing a post, in many languages (formats/googlegroups.ts): a refused sender, soft. */
  ['googlegroups', { groups: ['GoogleGroups'], format: /^GoogleGroups$/ }],
  /** Ipswitch IMail's one-line bounces (formats/imail.ts). */
  ['imail', { groups: ['IMailServer'], format: /^IMailServer$/ }],
  /** Trend Micro InterScan MSS notices (formats/interscan.ts). */
  ['interscan', { groups: ['InterScanMSS'], format: /^InterScanMSS$/ }],
  /** Mail.Ru's bounces (a Russian notice, then Exim's text): formats/mailru.ts. */
  ['mailru', { groups: ['MailRu'], format: /^MailRu$/ }],
  /** m-FILTER's bounces (formats/mfilter.ts). */
  ['mfilter', { groups: ['mFILTER'], format: /^mFILTER$/ }],
  /** OpenSMTPD's text bounces and delay warnings (formats/opensmtpd.ts). */
  ['opensmtpd', { groups: ['OpenSMTPD'], format: /^OpenSMTPD$/, shapes: ['other'] }],
  /** qmail-send's text bounces (formats/qmail.ts): `<address>:`, the remote reply, the (#x.y.z) status. */
  ['qmail', { groups: ['qmail'], format: /^qmail$/ }],
  /** RFC 3464 DSNs of every MTA and provider (formats/rfc3464.ts, dsn.ts): the reason from the diagnostic's words, the status and the refused command. */
  ['rfc3464', { format: /^RFC3464( \(forwarded\)| \(damaged MIME, read as text\))?$/, minAgreement: 0.9, shapes: ['rfc3464'] }],
  /** Sendmail V5 transcripts without DSN (formats/v5sendmail.ts). */
  ['v5sendmail', { groups: ['V5sendmail'], format: /^V5sendmail$/ }],
  /** Yahoo! Mail's text bounces (formats/yahoo.ts). */
  ['yahoo', { groups: ['Yahoo'], format: /^Yahoo$/, minAgreement: 0.8 }],
  /** Zoho Mail's bounces and delay warnings (formats/zoho.ts). */
  ['zoho', { groups: ['Zoho'], format: /^Zoho$/ }],
];

for (const [name, cases] of formats) t.test(`corpus: ${name}`, (t) => formatCases(t, cases));

const written: WrittenNotice[] = [...JAMES_NOTICES, ...LIST_NOTICES];
for (const n of written) {
  t.test(`written: ${n.format}: ${n.name}`, async (t) => {
    const { decoded, outcome, reason } = await decodeOutcome(Buffer.from(n.raw));
    t.match(decoded, { kind: 'bounce', format: n.format });
    if (decoded.kind !== 'bounce') return;
    const recipients = decoded.report.recipients.map((r) => r.finalRecipient ?? '');
    if (Array.isArray(n.recipients)) t.same(recipients, n.recipients, n.recipientsAre);
    else t.ok(recipients.length >= 1 && recipients.every((r) => (n.recipients as RegExp).test(r)), n.recipientsAre);
    t.equal(outcome, n.outcome, n.outcomeBecause ?? `${n.outcome}: what the words say`);
    if (n.stated) t.ok(decoded.report.recipients.every((r) => r.reason === n.stated), `the format states ${n.stated}`);
    t.equal(reason, n.reason, "the verdict's reason");
  });
}

for (const { language, raw } of SYSTEM_ERROR_NOTICES) {
  t.test(`written: other text bounce: another MTA's system error notice, no status, in ${language}, is a failure`, async (t) => {
    t.match(await decodeInbound(raw), { kind: 'bounce', format: 'other text bounce' });
    const { outcome } = await decodeOutcome(Buffer.from(raw));
    t.equal(outcome, 'soft', 'no status, no dead-address words: soft');
  });
}

t.test('written: FML: a list administrative mail that refuses nothing is no bounce', async (t) => {
  t.not((await decodeInbound(LIST_MODERATION_NOTICE)).kind, 'bounce');
});

/** A notice sent to the VERP address of a mail of ours, as a reporting system does: it bounces the mail. */
const throughListener: Array<{ notice: WrittenNotice; to: string; state: { bounce_class: string; reason: string } }> = [
  { notice: JAMES_NOTICES[0]!, to: 'ann@example.org', state: { bounce_class: 'hard', reason: 'userunknown' } },
  { notice: JAMES_NOTICES[1]!, to: 'bob@example.org', state: { bounce_class: 'soft', reason: 'systemerror' } },
  // The list refusing our post bounces the mail sent to the list, soft.
  { notice: LIST_NOTICES[0]!, to: 'elist@lists.example.jp', state: { bounce_class: 'soft', reason: 'rejected' } },
];
for (const { notice, to, state } of throughListener) {
  t.test(`through the listener: ${notice.format}: ${notice.name}: the mail to ${to} bounced`, async (t) => {
    const { mailId, verp } = await listener.sentMail(to);
    t.match(await listener.deliver(verp, notice.raw), /^250/);
    t.same(await listener.state(mailId), { status: 6, ...state });
  });
}
