// Fast retries for this file's queue: read when testDatabases creates the queues (release step).
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.SEND_RETRY_LIMIT = '2';

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import t from 'tap';
import { dsnVerdict, parseDeliveryStatus, readDsn } from '../engines/bounces/dsn.js';
import { parseFieldBlocks } from '../engines/bounces/fields.js';
import { referenceFromVerp, referencesFromOriginal } from '../domain/bounces/identify.js';
import { parseReportMessage } from '../engines/bounces/report-message.js';
import { readArf } from '../engines/bounces/arf.js';
import { acceptSend } from '../domain/mail/accept.js';
import { newId } from '../domain/mail/ids.js';
import { loadConfig } from '../config/config.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { startWorker } from '../runtime/worker.js';
import { startInboundSmtp } from '../smtp/inbound.js';
import { buildArfComplaint, buildDeliveryStatusNotification, type DsnOptions } from '../smtp/simulator.js';
import { createPool } from '../sql/pool.js';
import { connect } from 'node:net';
import { testDatabases } from './helpers/databases.js';
import { smtpDeliver } from './helpers/smtp-deliver.js';
import { startTestMailbox } from './helpers/mailbox.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { headerFields, mailLogRows, waitFor } from './helpers/send-stack.js';

/**
 * The loop back from sent mail over SMTP: DSNs and ARF reports delivered to the inbound
 * listener (real smtp-server on loopback) land in Postgres as bounces, restrictions and
 * complaints; the mailbox simulator's complaint* and dsnbounce* recipients do it end to end
 * (worker -> simulator -> inbound -> Postgres). The parsers are also checked on hand-written
 * reports in the shapes real MTAs and feedback loops send.
 */

// ---- the listener, the worker and the simulator ----------------------------------------------
// Started and loaded before the first subtest: tap may end the root test once its subtests are
// done and a teardown is registered, so fixtures still loading after a subtest could meet a
// stopped listener or database (test/exports.test.ts had exactly that failure).

const dbs = await testDatabases(t, 'inbound');
const logger = pino({ level: 'warn' }, pino.destination(2));
const softBounceCalls: number[] = [];
const inbound = await startInboundSmtp({ pool: dbs.pool, port: 0, logger, onSoftBounce: (id) => softBounceCalls.push(id) });
t.teardown(() => inbound.close());
const { simulator, mailboxDir } = await startTestMailbox(t, { inboundUrl: `smtp://127.0.0.1:${inbound.port}` });

const a = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const queue = jobQueue(dbs.databaseUrl);
const addresses = [
  'dsn-hard', 'dsn-soft', 'dsn-delayed', 'dsn-lower', 'arf-verp', 'arf-fixed', 'not-a-report', 'complaint-e2e', 'dsnbounce-e2e',
  'forged-target', 'multi-a', 'multi-b', 'legacy',
].map(
  (l) => `${l}@example.org`,
);
const accepted = await acceptSend(a.tenant, dbs.pool, queue, {
  from: 'news@send.example',
  to: addresses.map((email) => ({ email })),
  subject: 'Hello {{email}}',
  text: 'Body for {{email}}',
});
const ids = Object.fromEntries(accepted.mails.map((m) => [m.to.split('@')[0]!, m.mail_id])) as Record<string, string>;
// Another tenant, whose recipient holds a genuine tag of its own mail and tries it on a's mails.
const b = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, b.tenant, { domain: 'other.example', senders: [{ email: 'hello', name: 'Other' }] });
const acceptedB = await acceptSend(b.tenant, dbs.pool, queue, { from: 'hello@other.example', to: [{ email: 'b-reader@example.org' }], subject: 'Hi', text: 'Hi' });
ids['b-reader'] = acceptedB.mails[0]!.mail_id;

const worker = await startWorker(loadConfig({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, SMTP_URL: simulator.url, PUBLIC_URL: 'https://cartero.test', LOG_LEVEL: 'warn' }), logger);
t.teardown(() => worker.stop());

interface MailRow {
  status: number;
  bounce_class: string | null;
}
const mail = async (id: string) => (await dbs.pool.query<MailRow>('SELECT status, bounce_class FROM mails WHERE mail_id = $1', [id])).rows[0]!;
const logs = (id: string) => mailLogRows(dbs.pool, id);
const bounces = async (id: string) =>
  (await dbs.pool.query('SELECT recipient, class, source, smtp_enhanced, diagnostic, evaluated FROM mail_bounces WHERE mail_id = $1 ORDER BY id', [id])).rows;
const restrictions = async (recipient: string) =>
  (await dbs.pool.query('SELECT instance_id, recipient, reason, deleted_at FROM mail_restrictions WHERE recipient = $1 ORDER BY id', [recipient])).rows;
const complaints = async (id: string) =>
  (await dbs.pool.query(
    'SELECT k.instance_id, m.to_email AS recipient, k.feedback_type, k.reported_by, k.arrival_date FROM mail_complaints k JOIN mails m USING (mail_id) WHERE k.mail_id = $1',
    [id],
  )).rows;
// Outbox events other than delivery moves (every move also writes a 'status' event).
const events = async (id: string) =>
  (await dbs.pool.query(`SELECT instance_id, kind FROM event_outbox WHERE mail_id = $1 AND kind <> 'status' ORDER BY id`, [id])).rows;

// Every mail is sent (the simulator answers 250 to all of these) before reports come back.
await waitFor('every mail sent', async () => {
  const { rows } = await dbs.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM mails WHERE msg_id = ANY($1) AND status IN (3, 6)', [[accepted.msg_id, acceptedB.msg_id]]);
  return rows[0]!.n === addresses.length + 1 ? true : undefined;
});

/**
 * What a remote MTA has of the mail, read from the message the simulator stored: the bytes, the
 * envelope sender (its tagged return path), the recipient and the Message-ID. `tagged` is the
 * `MAILID.TAG` the mail names itself by.
 */
function original(local: string) {
  const id = ids[local]!;
  const file = readdirSync(mailboxDir).find((f) => f.endsWith('.eml') && f.includes(id));
  if (!file) throw new Error(`no stored message for ${local}`);
  const raw = readFileSync(join(mailboxDir, file));
  const fields = headerFields(raw);
  const get = (name: string) => fields.find(([k]) => k === name)?.[1];
  const mailFrom = /^<([^>]+)>$/.exec(get('return-path') ?? '')?.[1];
  const messageId = get('message-id');
  if (!mailFrom || !messageId) throw new Error(`stored message for ${local} has no return path or Message-ID`);
  const tagged = mailFrom.slice('bounce+'.length, mailFrom.indexOf('@'));
  return { raw, recipient: local === 'b-reader' ? 'b-reader@example.org' : `${local}@example.org`, mailFrom, messageId, tagged };
}
function dsnFor(local: string, opts?: DsnOptions): string {
  return buildDeliveryStatusNotification(original(local), opts);
}

/** One delivery to the listener over its own connection; the final SMTP reply. */
function deliver(to: string | string[], raw: string, from = '', port = inbound.port): Promise<{ code: number; response: string }> {
  return smtpDeliver(port, to, raw, from);
}

// ---- parsers, on reports written the way real systems write them -----------------------------

const POSTFIX_STATUS = [
  'Reporting-MTA: dns; mx.example.net',
  'X-Postfix-Queue-ID: 3F2A11234',
  'Arrival-Date: Thu,  5 Nov 2026 12:01:02 +0000 (UTC)',
  '',
  'Final-Recipient: rfc822; other@example.org',
  'Action: delivered',
  'Status: 2.0.0',
  '',
  'Final-Recipient: rfc822; Ann@Example.org',
  'Original-Recipient: rfc822;ann@example.org',
  'Action: failed',
  'Status: 5.1.1',
  'Remote-MTA: dns; mx.example.org',
  'Diagnostic-Code: smtp; 550 5.1.1 <ann@example.org>: Recipient address rejected:',
  '    User unknown in virtual mailbox table',
  '',
].join('\r\n');

t.test('field blocks: unfolding, repeats, odd lines, blank-ish separators', async (t) => {
  const blocks = parseFieldBlocks('A: 1\nB: two\n  folded\nnot a field\nA: again\n \t\nC:3\r\n\r\n\r\n');
  t.same(blocks.map((b) => Object.fromEntries(b)), [{ a: ['1', 'again'], b: ['two folded'] }, { c: ['3'] }]);
  t.same(parseFieldBlocks(''), []);
  t.same(parseFieldBlocks('Diagnostic-Code: smtp; 550\u0000 gone\n')[0]!.get('diagnostic-code'), ['smtp; 550 gone'], 'NUL dropped');
});

t.test('DSN fields: per-message block, one block per recipient', async (t) => {
  const { message, recipients } = parseDeliveryStatus(POSTFIX_STATUS);
  t.same(message.get('reporting-mta'), ['dns; mx.example.net']);
  t.same(recipients, [
    { finalRecipient: 'other@example.org', originalRecipient: undefined, action: 'delivered', status: '2.0.0', remoteMta: undefined },
    {
      finalRecipient: 'ann@example.org',
      originalRecipient: 'ann@example.org',
      action: 'failed',
      status: '5.1.1',
      diagnostic: '550 5.1.1 <ann@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
      diagnosticType: 'smtp',
      remoteMta: 'mx.example.org',
    },
  ]);
  // Status with a comment and leading zeros, Action with a comment: normalized.
  const odd = parseDeliveryStatus('Reporting-MTA: dns; x\n\nFinal-Recipient: rfc822; <b@x.org>\nAction: Failed (gave up)\nStatus: 5.02.002 (mailbox full)\n');
  t.match(odd.recipients, [{ finalRecipient: 'b@x.org', action: 'failed', status: '5.2.2' }]);
});

t.test('DSN verdicts: hard or soft by status, the mail recipient\'s block first', async (t) => {
  const report = { recipients: parseDeliveryStatus(POSTFIX_STATUS).recipients };
  t.same(dsnVerdict(report, 'ANN@example.org'), {
    kind: 'failed',
    bounceClass: 'hard',
    reason: 'userunknown',
    status: '5.1.1',
    smtpCode: 550,
    diagnostic: '550 5.1.1 <ann@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
  });
  t.same(dsnVerdict(report, 'other@example.org'), { kind: 'none', why: 'action delivered' }, 'the other block is about a delivery');
  const one = (fields: string) => ({ recipients: parseDeliveryStatus(`Reporting-MTA: dns; x\n\nFinal-Recipient: rfc822; c@x.org\n${fields}`).recipients });
  t.match(dsnVerdict(one('Action: failed\nStatus: 4.4.7\n'), 'c@x.org'), { kind: 'failed', bounceClass: 'soft', status: '4.4.7' });
  t.match(dsnVerdict(one('Action: failed\nStatus: 5.2.2\n'), 'c@x.org'), { kind: 'failed', bounceClass: 'soft', status: '5.2.2' }, 'mailbox full: soft, like a synchronous 552 5.2.2');
  t.match(dsnVerdict(one('Action: failed\nStatus: 5.1.10\n'), 'c@x.org'), { kind: 'failed', bounceClass: 'hard', status: '5.1.10' });
  t.match(dsnVerdict(one('Action: failed\nDiagnostic-Code: smtp; 550 5.1.1 no such user\n'), 'c@x.org'), { kind: 'failed', bounceClass: 'hard', status: '5.1.1', smtpCode: 550 }, 'status from the diagnostic');
  t.match(dsnVerdict(one('Action: failed\n'), 'c@x.org'), { kind: 'failed', bounceClass: 'soft' }, 'a failure that says nothing about the address');
  t.match(dsnVerdict(one('Action: delayed\nStatus: 4.4.1\nDiagnostic-Code: X-Unix; connection timed out\n'), 'c@x.org'), { kind: 'delayed', status: '4.4.1', diagnostic: 'connection timed out' });
  t.same(dsnVerdict({ recipients: [] }, 'c@x.org'), { kind: 'none', why: "no recipient block names the mail's recipient" });
  // A report changes only the mail whose recipient it names: a failure about someone else
  // (a forged block, or a forward that rewrote the address) changes nothing.
  t.same(dsnVerdict(one('Action: failed\nStatus: 5.1.1\n'), 'someone-else@x.org'), { kind: 'none', why: "no recipient block names the mail's recipient" });
});

t.test('mail references: from VERP addresses (any case) and from returned headers, with their tags', async (t) => {
  const id = newId();
  const tag = '1' + 'ab'.repeat(10);
  t.same(referenceFromVerp(`bounce+${id}.${tag}@send.example`), { mailId: id, tag });
  t.same(referenceFromVerp(`bounce+${id.toLowerCase()}.${tag.toUpperCase()}@send.example`), { mailId: id, tag }, 'a lower-cased local part still names the mail');
  t.same(referenceFromVerp(`BOUNCE+${id}@SEND.EXAMPLE`), { mailId: id, tag: undefined }, 'untagged (a mail sent before tags)');
  t.equal(referenceFromVerp(`bounce+${id}x@send.example`), undefined);
  t.equal(referenceFromVerp(`bounce+${id}.@send.example`), undefined);
  t.equal(referenceFromVerp(`bounce+${id.slice(0, 25)}U@send.example`), undefined, 'U is not in the ULID alphabet');
  t.equal(referenceFromVerp(`news+${id}@send.example`), undefined);
  const headers = (text: string) => parseFieldBlocks(text)[0];
  t.same(referencesFromOriginal(headers(`Message-ID: <${id.toLowerCase()}.${tag}@send.example>\n`)), [{ mailId: id, tag }]);
  t.same(referencesFromOriginal(headers(`Message-ID: <${id}@send.example>\n`)), [{ mailId: id, tag: undefined }]);
  t.same(referencesFromOriginal(headers(`X-Cartero-Mail-Id: ${id}.${tag}\nMessage-ID: <other@x>\n`)), [{ mailId: id, tag }]);
  t.same(referencesFromOriginal(headers(`X-Cartero-Mail-Id: ${id}.${tag}\nMessage-ID: <${id}.${tag}@send.example>\n`)), [{ mailId: id, tag }], 'the same reference once');
  t.same(referencesFromOriginal(headers('Message-ID: <8787KJKJ3K4J3K4J3K4J3.mail@example.net>\n')), []);
  t.same(referencesFromOriginal(undefined), []);
});

t.test('a whole DSN as Postfix sends it: status part and the returned original', async (t) => {
  const id = newId();
  const boundary = '3F2A11234.1730808062/mx.example.net';
  const raw = [
    'From: MAILER-DAEMON@mx.example.net (Mail Delivery System)',
    `To: bounce+${id.toLowerCase()}@send.example`,
    'Subject: Undelivered Mail Returned to Sender',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status;',
    `\tboundary="${boundary}"`,
    '',
    'This is a MIME-encapsulated message.',
    '',
    `--${boundary}`,
    'Content-Description: Notification',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    "I'm sorry to have to inform you that your message could not be delivered.",
    '',
    `--${boundary}`,
    'Content-Description: Delivery report',
    'Content-Type: message/delivery-status',
    '',
    POSTFIX_STATUS,
    `--${boundary}`,
    'Content-Description: Undelivered Message',
    'Content-Type: message/rfc822',
    'Content-Transfer-Encoding: 8bit',
    '',
    `Return-Path: <bounce+${id}@send.example>`,
    `Message-ID: <${id}@send.example>`,
    'Subject: Hello',
    '',
    'Body',
    '',
    `--${boundary}--`,
    '',
  ].join('\r\n');
  const parsed = await parseReportMessage(raw);
  const dsn = readDsn(parsed);
  t.equal(dsn?.reportingMta, 'mx.example.net');
  t.same(dsn?.recipients.map((r) => [r.finalRecipient, r.action]), [['other@example.org', 'delivered'], ['ann@example.org', 'failed']]);
  t.same(referencesFromOriginal(dsn?.original), [{ mailId: id, tag: undefined }], 'the returned original names the mail');
  t.match(dsnVerdict(dsn!, 'ann@example.org'), { kind: 'failed', bounceClass: 'hard', status: '5.1.1', smtpCode: 550 });
  t.equal(readArf(parsed), undefined, 'not a feedback report');
});

// RFC 5965 appendix B, with the original's Message-ID made one of Cartero's (given per test).
function rfc5965Report(messageId: string, feedbackType = 'abuse'): string {
  return [
    'From: <abusedesk@example.com>',
    'Date: Thu, 8 Mar 2005 17:40:36 EDT',
    'Subject: FW: Earn money',
    'To: <fbl@feedback.cartero.test>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report;',
    '     boundary="part1_13d.2e68ed54_boundary"',
    '',
    '--part1_13d.2e68ed54_boundary',
    'Content-Type: text/plain; charset="US-ASCII"',
    'Content-Transfer-Encoding: 7bit',
    '',
    'This is an email abuse report for an email message received from IP',
    '192.0.2.1 on Thu, 8 Mar 2005 14:00:00 EDT.',
    '',
    '--part1_13d.2e68ed54_boundary',
    'Content-Type: message/feedback-report',
    '',
    `Feedback-Type: ${feedbackType}`,
    'User-Agent: SomeGenerator/1.0',
    'Version: 1',
    'Original-Mail-From: <somespammer@example.net>',
    'Original-Rcpt-To: <user@example.com>',
    'Arrival-Date: Thu, 8 Mar 2005 14:00:00 EDT',
    'Reporting-MTA: dns; mail.example.com',
    'Source-IP: 192.0.2.1',
    'Authentication-Results: mail.example.com;',
    '               spf=fail smtp.mail=somespammer@example.com',
    'Reported-Domain: example.net',
    'Removal-Recipient: user@example.com',
    '',
    '--part1_13d.2e68ed54_boundary',
    'Content-Type: message/rfc822',
    'Content-Disposition: inline',
    '',
    'From: <somespammer@example.net>',
    'Received: from mailserver.example.net (mailserver.example.net',
    '     [192.0.2.1]) by example.com with ESMTP id M63d4137594e46;',
    '     Thu, 08 Mar 2005 14:00:00 -0400',
    'To: <Undisclosed Recipients>',
    'Subject: Earn money',
    'MIME-Version: 1.0',
    'Content-type: text/plain',
    `Message-ID: ${messageId}`,
    'Date: Thu, 02 Sep 2004 12:31:03 -0500',
    '',
    'Spam Spam Spam',
    'Spam Spam Spam',
    '--part1_13d.2e68ed54_boundary--',
    '',
  ].join('\r\n');
}

t.test('ARF: the RFC 5965 example reads, and names the mail by its Message-ID', async (t) => {
  const id = newId();
  const arf = readArf(await parseReportMessage(rfc5965Report(`<${id}@send.example>`)));
  t.ok(arf, 'a feedback report');
  t.match(arf, {
    feedbackType: 'abuse',
    userAgent: 'SomeGenerator/1.0',
    version: '1',
    originalMailFrom: 'somespammer@example.net',
    originalRcptTo: ['user@example.com'],
  });
  t.equal(arf!.arrivalDate?.toISOString(), '2005-03-08T18:00:00.000Z');
  t.same(referencesFromOriginal(arf!.original), [{ mailId: id, tag: undefined }]);
  t.equal(readDsn(await parseReportMessage(rfc5965Report('<x@y>'))), undefined, 'not a DSN');
});

t.test('a 5.1.1 DSN for a sent mail: bounced hard, logged as dsn, hard_bounce restriction', async (t) => {
  const id = ids['dsn-hard']!;
  t.equal((await mail(id)).status, 3, 'sent first');
  const r = await deliver(original('dsn-hard').mailFrom, dsnFor('dsn-hard'));
  t.equal(r.code, 250, r.response);
  t.same(await mail(id), { status: 6, bounce_class: 'hard' });
  const l = await logs(id);
  t.same(l.map((x) => x.status), [1, 2, 3, 6]);
  t.same(l[3], {
    status: 6,
    reason: 'dsn',
    smtp_code: 550,
    smtp_enhanced: '5.1.1',
    smtp_reply: '550 5.1.1 <dsn-hard@example.org>: Recipient address rejected: User unknown',
    attempt: null,
  });
  t.same(await bounces(id), [
    { recipient: 'dsn-hard@example.org', class: 'hard', source: 'dsn', smtp_enhanced: '5.1.1', diagnostic: l[3]!.smtp_reply, evaluated: false },
  ]);
  t.same(await restrictions('dsn-hard@example.org'), [{ instance_id: a.tenant.instanceId, recipient: 'dsn-hard@example.org', reason: 'hard_bounce', deleted_at: null }]);

  // The same DSN again (an MTA retrying after a lost 250): nothing more happens.
  t.equal((await deliver(original('dsn-hard').mailFrom, dsnFor('dsn-hard'))).code, 250);
  t.equal((await logs(id)).length, 4, 'no new log row');
  t.equal((await bounces(id)).length, 1, 'no second bounce');
  t.equal((await restrictions('dsn-hard@example.org')).length, 1);
});

t.test('a failed DSN with a 4.x.x status: soft bounce, no restriction, threshold job notified', async (t) => {
  const id = ids['dsn-soft']!;
  const before = softBounceCalls.length;
  const r = await deliver(original('dsn-soft').mailFrom, dsnFor('dsn-soft', { status: '4.4.7', diagnostic: '421 4.4.7 Message expired' }));
  t.equal(r.code, 250, r.response);
  t.same(await mail(id), { status: 6, bounce_class: 'soft' });
  t.match((await logs(id)).at(-1), { status: 6, reason: 'dsn', smtp_code: 421, smtp_enhanced: '4.4.7', smtp_reply: '421 4.4.7 Message expired' });
  t.match(await bounces(id), [{ class: 'soft', source: 'dsn', smtp_enhanced: '4.4.7' }]);
  t.same(await restrictions('dsn-soft@example.org'), [], 'a soft bounce alone restricts nothing');
  t.same(softBounceCalls.slice(before), [a.tenant.instanceId], 'onSoftBounce called once, with the instance');
});

t.test('a delayed DSN: a log row at the current status, nothing else', async (t) => {
  const id = ids['dsn-delayed']!;
  const r = await deliver(original('dsn-delayed').mailFrom, dsnFor('dsn-delayed', { action: 'delayed' }));
  t.equal(r.code, 250, r.response);
  t.same(await mail(id), { status: 3, bounce_class: null }, 'still sent');
  const l = await logs(id);
  t.same(l.map((x) => [x.status, x.reason]), [[1, 'accepted'], [2, 'handed_to_smtp'], [3, null], [3, 'dsn_delayed']]);
  t.match(l[3], { smtp_code: 451, smtp_enhanced: '4.4.7', smtp_reply: /still trying/ });
  t.same(await bounces(id), []);
  t.same(await restrictions('dsn-delayed@example.org'), []);
  const { rows } = await dbs.pool.query<{ status: number }>(
    "SELECT status FROM event_outbox WHERE mail_id = $1 AND kind = 'status' ORDER BY id",
    [id],
  );
  t.same(rows.map((r) => r.status), [1, 2, 3], 'delivery history: the three moves, no event for the note');
});

t.test('RCPT and DATA answer alike whether the VERP address names a mail or not', async (t) => {
  const real = original('dsn-delayed');
  // A probe's report carries no tag of its own (a returned original would prove it saw a mail).
  const probe = (to: string) => deliver(to, buildDeliveryStatusNotification({ ...real, raw: Buffer.from('Subject: x\r\n\r\nx\r\n'), mailFrom: to }));
  const answers = await Promise.all(
    [
      `bounce+${newId()}.${real.tagged.split('.')[1]}@send.example`, // no such mail
      `bounce+${newId()}@send.example`, // no such mail, untagged
      `bounce+${ids['dsn-delayed']}@send.example`, // an existing mail, untagged
      `bounce+${ids['dsn-delayed']}.1${'0'.repeat(20)}@send.example`, // an existing mail, wrong tag
      'bounce+not-a-mail-id@send.example',
    ].map(probe),
  );
  t.same(answers, answers.map(() => ({ code: 250, response: '250 2.0.0 Ok: ignored' })), 'one answer for all: existence is not revealed');
  t.equal((await logs(ids['dsn-delayed']!)).length, 4, 'the mail named inside the report is untouched');
});

t.test('a lower-cased mail id in the VERP address still finds the mail', async (t) => {
  const id = ids['dsn-lower']!;
  const r = await deliver(original('dsn-lower').mailFrom.toLowerCase(), dsnFor('dsn-lower'));
  t.equal(r.code, 250, r.response);
  t.same(await mail(id), { status: 6, bounce_class: 'hard' });
  t.match((await logs(id)).at(-1), { status: 6, reason: 'dsn', smtp_enhanced: '5.1.1' });
});

t.test('an ARF report: one complaint row and one outbox event, no restriction; a resend adds nothing', async (t) => {
  const id = ids['arf-verp']!;
  const report = buildArfComplaint({ ...original('arf-verp'), arrivalDate: new Date('2026-11-05T12:00:00Z') });
  const r = await deliver(original('arf-verp').mailFrom, report, 'fbl@provider.example');
  t.equal(r.code, 250, r.response);
  const expected = [
    { instance_id: a.tenant.instanceId, recipient: 'arf-verp@example.org', feedback_type: 'abuse', reported_by: 'Cartero-MailboxSimulator/1.0', arrival_date: new Date('2026-11-05T12:00:00Z') },
  ];
  t.same(await complaints(id), expected);
  t.same(await events(id), [{ instance_id: a.tenant.instanceId, kind: 'complaint' }]);
  t.same(await restrictions('arf-verp@example.org'), [], 'a complaint alone does not restrict');
  t.same(await mail(id), { status: 3, bounce_class: null }, 'the mail stays sent');

  const again = await deliver(original('arf-verp').mailFrom, report, 'fbl@provider.example');
  t.equal(again.code, 250);
  t.same(await complaints(id), expected, 'still one complaint');
  t.equal((await events(id)).length, 1, 'still one event');
});

t.test('a feedback loop reporting to a fixed address: the mail is found by the original Message-ID', async (t) => {
  const id = ids['arf-fixed']!;
  const r = await deliver('fbl@feedback.cartero.test', rfc5965Report(original('arf-fixed').messageId), 'abusedesk@example.com');
  t.equal(r.code, 250, r.response);
  t.same(await complaints(id), [
    { instance_id: a.tenant.instanceId, recipient: 'arf-fixed@example.org', feedback_type: 'abuse', reported_by: 'SomeGenerator/1.0', arrival_date: new Date('2005-03-08T18:00:00Z') },
  ]);
  t.equal((await events(id)).length, 1);

  // not-spam is the opposite of a complaint; a report about a mail that is not ours is ignored.
  const other = ids['not-a-report']!;
  t.equal((await deliver('fbl@feedback.cartero.test', rfc5965Report(original('not-a-report').messageId, 'not-spam'))).code, 250);
  t.equal((await deliver('fbl@feedback.cartero.test', rfc5965Report('<8787KJKJ3K4J3K4J3K4J3.mail@example.net>'))).code, 250);
  t.same(await complaints(other), []);
  t.same(await events(other), []);
});

t.test('messages that are no report: 550 at a plain address, 250 and ignored at a VERP address', async (t) => {
  const id = ids['not-a-report']!;
  const plain = 'From: someone@example.org\r\nTo: x@y\r\nSubject: Out of office\r\n\r\nI am away until Monday.\r\n';
  const r = await deliver('postmaster@feedback.cartero.test', plain, 'someone@example.org');
  t.equal(r.code, 550);
  t.match(r.response, /^550 5\.1\.1 /);
  const before = await logs(id);
  t.equal((await deliver(original('not-a-report').mailFrom, plain, 'someone@example.org')).code, 250, 'an auto-reply to the return path');
  const garbage = 'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nnonsense without fields\r\n--b--\r\n';
  t.equal((await deliver(original('not-a-report').mailFrom, garbage)).code, 250, 'an unreadable DSN: 250, never a 5xx loop');
  t.same(await logs(id), before, 'nothing changed');
  t.same(await mail(id), { status: 3, bounce_class: null });
});

t.test('forged reports naming another tenant\'s mail change nothing; the genuine one still works', async (t) => {
  const id = ids['forged-target']!;
  const victim = 'forged-target@example.org';
  const theirs = original('b-reader'); // tenant b's recipient: a genuine tag, of another mail
  const otherTag = theirs.tagged.split('.')[1]!;
  const wrongTag = `1${'0'.repeat(20)}`;
  // What a forger can write: the victim's address and mail id, in any header, with any tag.
  const fake = (headerLines: string[]) => ({ raw: Buffer.from(`${headerLines.join('\r\n')}\r\nSubject: x\r\n\r\nx\r\n`), recipient: victim, mailFrom: `bounce+${id}@send.example`, messageId: `<${id}@send.example>` });
  const byHeader = fake([`X-Cartero-Mail-Id: ${id}`, `Message-ID: <${id}@send.example>`]);
  const byWrongTagHeader = fake([`X-Cartero-Mail-Id: ${id}.${wrongTag}`, `Message-ID: <${id}.${otherTag}@send.example>`]);
  const forgeries: Array<[string, string | string[], string]> = [
    ['DSN to postmaster, the mail named by untagged headers', 'postmaster@send.example', buildDeliveryStatusNotification(byHeader)],
    ['DSN to postmaster, the mail named by wrongly tagged headers', 'postmaster@send.example', buildDeliveryStatusNotification(byWrongTagHeader)],
    ['DSN to the untagged VERP address', `bounce+${id}@send.example`, buildDeliveryStatusNotification(byHeader)],
    ['DSN to the VERP address with a wrong tag', `bounce+${id}.${wrongTag}@send.example`, buildDeliveryStatusNotification(byHeader)],
    ["DSN to the VERP address with another mail's genuine tag", `bounce+${id}.${otherTag}@send.example`, buildDeliveryStatusNotification(byHeader)],
    ['ARF to a fixed address, untagged headers', 'fbl@feedback.cartero.test', buildArfComplaint(byHeader)],
    ['ARF to a fixed address, wrongly tagged headers', 'fbl@feedback.cartero.test', buildArfComplaint(byWrongTagHeader)],
    ['ARF to the untagged VERP address', `bounce+${id}@send.example`, buildArfComplaint(byHeader)],
    ["ARF to the VERP address with another mail's genuine tag", `bounce+${id}.${otherTag}@send.example`, buildArfComplaint(byHeader)],
    ['RFC 5965 report naming the mail by its untagged Message-ID', 'fbl@feedback.cartero.test', rfc5965Report(`<${id}@send.example>`)],
  ];
  const before = { mail: await mail(id), logs: await logs(id) };
  for (const [what, to, raw] of forgeries) {
    t.same(await deliver(to, raw, 'attacker@evil.example'), { code: 250, response: '250 2.0.0 Ok: ignored' }, `${what}: 250, ignored`);
  }
  t.same(await mail(id), before.mail, 'the mail stays sent');
  t.same(await logs(id), before.logs, 'no log row');
  t.same(await bounces(id), [], 'no bounce');
  t.same(await restrictions(victim), [], 'no restriction: the next send to the address is not dropped');
  t.same(await complaints(id), [], 'no complaint');
  t.same(await events(id), [], 'no outbox event');
  t.same(await complaints(ids['b-reader']!), [], "the other mail, whose tag was borrowed, is untouched too");

  // The same DSN from who saw the mail (its tagged return path) is applied.
  const genuine = await deliver(original('forged-target').mailFrom, dsnFor('forged-target'));
  t.equal(genuine.response, '250 2.0.0 Ok: delivery status recorded');
  t.same(await mail(id), { status: 6, bounce_class: 'hard' });
});

t.test('a multi-recipient report changes only the mail of each recipient it names', async (t) => {
  const [ma, mb] = [original('multi-a'), original('multi-b')];
  // One DSN about multi-b only, sent to both return paths: multi-a's return path is no licence
  // to bounce multi-a with a block about someone else.
  const r = await deliver([ma.mailFrom, mb.mailFrom], buildDeliveryStatusNotification(mb));
  t.equal(r.response, '250 2.0.0 Ok: delivery status recorded');
  t.same(await mail(ids['multi-b']!), { status: 6, bounce_class: 'hard' }, 'the named recipient\'s own mail bounced');
  t.same(await mail(ids['multi-a']!), { status: 3, bounce_class: null }, 'the other mail is untouched');
  t.same(await restrictions('multi-a@example.org'), []);
});

t.test('mails received before tags existed: an untagged report counts only when it names the mail\'s recipient', async (t) => {
  const id = ids['legacy']!;
  await dbs.pool.query(
    `UPDATE mails SET received_at = (SELECT value::timestamptz - interval '1 day' FROM service_secrets WHERE name = 'report_tags_since') WHERE mail_id = $1`,
    [id],
  );
  const untagged = { raw: Buffer.from(`Message-ID: <${id}@send.example>\r\n\r\nx\r\n`), mailFrom: `bounce+${id}@send.example`, messageId: `<${id}@send.example>` };
  const aboutSomeoneElse = buildDeliveryStatusNotification({ ...untagged, recipient: 'someone-else@example.org' });
  t.equal((await deliver(`bounce+${id}@send.example`, aboutSomeoneElse)).response, '250 2.0.0 Ok: ignored');
  t.same(await mail(id), { status: 3, bounce_class: null }, 'a block about another address changes nothing');
  const aboutItsRecipient = buildDeliveryStatusNotification({ ...untagged, recipient: 'legacy@example.org' });
  t.equal((await deliver(`bounce+${id}@send.example`, aboutItsRecipient)).response, '250 2.0.0 Ok: delivery status recorded');
  t.same(await mail(id), { status: 6, bounce_class: 'hard' }, 'naming its own recipient, the old untagged form still works');
});

/** A raw SMTP conversation: each command's reply (first line of it), the banner first. */
async function converse(port: number, commands: string[]): Promise<string[]> {
  const socket = connect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  const replies: string[] = [];
  let buffer = '';
  let waiting: ((line: string) => void) | undefined;
  const pending: string[] = [];
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\r\n'); nl >= 0; nl = buffer.indexOf('\r\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      if (/^\d{3}-/.test(line)) continue; // a multi-line reply's continuation
      if (waiting) {
        const w = waiting;
        waiting = undefined;
        w(line);
      } else pending.push(line);
    }
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const next = () =>
    pending.length
      ? Promise.resolve(pending.shift()!)
      : Promise.race([new Promise<string>((resolve) => (waiting = resolve)), closed.then(() => 'closed')]);
  replies.push(await next());
  for (const command of commands) {
    if (replies.at(-1)!.startsWith('421') || replies.at(-1) === 'closed') break;
    socket.write(`${command}\r\n`);
    if (command.endsWith('\r\n.')) {
      replies.push(await next());
      continue;
    }
    replies.push(await next());
  }
  socket.destroy();
  return replies;
}

const MESSAGE = ['MAIL FROM:<>', 'RCPT TO:<bounce+x@send.example>', 'DATA', 'Subject: hi\r\n\r\nnot a report\r\n.'];

t.test('the listener bounds recipients, messages per connection, messages per address and connections', async (t) => {
  const limited = await startInboundSmtp({ pool: dbs.pool, port: 0, logger, limits: { maxRecipients: 2, maxMessagesPerConnection: 2, ratePerMinute: 4, maxConnections: 2 } });
  t.teardown(() => limited.close());
  const codes = (replies: string[]) => replies.map((r) => r.slice(0, 3));

  const rcpt = await converse(limited.port, ['EHLO x', 'MAIL FROM:<>', 'RCPT TO:<a@x.example>', 'RCPT TO:<b@x.example>', 'RCPT TO:<c@x.example>', 'QUIT']);
  t.same(codes(rcpt), ['220', '250', '250', '250', '250', '452', '221'], 'a third recipient: 452');
  t.match(rcpt[5], /4\.5\.3/);

  const perConnection = await converse(limited.port, ['EHLO x', ...MESSAGE, ...MESSAGE, ...MESSAGE]);
  t.same(codes(perConnection), ['220', '250', '250', '250', '354', '250', '250', '250', '354', '250', '421'], 'a third message on one connection: 421');

  // 3 messages begun so far from 127.0.0.1 (each MAIL FROM counts): one more is allowed.
  const perAddress = await converse(limited.port, ['EHLO x', ...MESSAGE, 'MAIL FROM:<>']);
  t.same(codes(perAddress), ['220', '250', '250', '250', '354', '250', '421'], 'the fifth message in a minute from one address: 421');
  t.same(codes(await converse(limited.port, ['EHLO x'])), ['421'], 'and a new connection from it is refused at the banner');

  // Connections: a listener of its own (this one now refuses 127.0.0.1 for the rest of the minute).
  const capped = await startInboundSmtp({ pool: dbs.pool, port: 0, logger, limits: { maxConnections: 2 } });
  t.teardown(() => capped.close());
  const sockets = [connect(capped.port, '127.0.0.1'), connect(capped.port, '127.0.0.1')];
  const banners = await Promise.all(sockets.map((s) => new Promise<string>((resolve) => s.once('data', (d) => resolve(String(d).slice(0, 3))))));
  t.same(banners, ['220', '220']);
  t.same(codes(await converse(capped.port, [])), ['421'], 'a third simultaneous connection: 421');
  for (const s of sockets) s.destroy();
  await new Promise((r) => setTimeout(r, 200));
  t.same(codes(await converse(capped.port, ['QUIT'])), ['220', '221'], 'once they close, a new one is served');
});

t.test('Postgres unreachable: 451 so the reporting MTA retries', async (t) => {
  // A listener whose pool points at a port where nothing listens: a real connection failure.
  const deadPool = createPool('postgres://127.0.0.1:1/nothing', { max: 1 });
  const down = await startInboundSmtp({ pool: deadPool, port: 0, logger });
  t.teardown(async () => {
    await down.close();
    await deadPool.end();
  });
  const send = async (to: string, raw: string) => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: down.port, secure: false, ignoreTLS: true });
    try {
      await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
      return 250;
    } catch (err) {
      return (err as { responseCode?: number }).responseCode;
    } finally {
      transport.close();
    }
  };
  t.equal(await send(original('not-a-report').mailFrom, dsnFor('not-a-report')), 451, 'a DSN to a return path');
  t.equal(await send('fbl@feedback.cartero.test', rfc5965Report(original('not-a-report').messageId)), 451, 'a feedback report to a fixed address');
});

t.test('simulator complaint* recipient: a real ARF report through the listener (simulator -> inbound -> Postgres)', async (t) => {
  const id = ids['complaint-e2e']!;
  const rows = await waitFor('the complaint row', async () => {
    const c = await complaints(id);
    return c.length ? c : undefined;
  }, { ms: 30_000 });
  t.match(rows, [{ instance_id: a.tenant.instanceId, recipient: 'complaint-e2e@example.org', feedback_type: 'abuse', reported_by: 'Cartero-MailboxSimulator/1.0' }]);
  t.same(await events(id), [{ instance_id: a.tenant.instanceId, kind: 'complaint' }]);
  t.same(await mail(id), { status: 3, bounce_class: null });
  t.same(await restrictions('complaint-e2e@example.org'), []);
});

t.test('simulator dsnbounce* recipient: sent, then a late DSN makes it a hard bounce', async (t) => {
  const id = ids['dsnbounce-e2e']!;
  await waitFor('the bounce', async () => ((await mail(id)).status === 6 ? true : undefined), { ms: 30_000 });
  t.same(await mail(id), { status: 6, bounce_class: 'hard' });
  const l = await logs(id);
  t.same(l.map((x) => [x.status, x.reason]), [[1, 'accepted'], [2, 'handed_to_smtp'], [3, null], [6, 'dsn']], 'sent (250) first, bounced by the DSN');
  t.match(l[3], { smtp_code: 550, smtp_enhanced: '5.1.1', smtp_reply: /User unknown/ });
  t.match(await bounces(id), [{ class: 'hard', source: 'dsn' }]);
  t.match(await restrictions('dsnbounce-e2e@example.org'), [{ reason: 'hard_bounce', deleted_at: null }]);
});
