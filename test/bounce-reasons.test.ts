import nodemailer from 'nodemailer';
import { pino } from 'pino';
import t from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { reportKeys } from '../domain/bounces/report-keys.js';
import { reportTag } from '../domain/bounces/report-tag.js';
import { startInboundSmtp } from '../smtp/inbound.js';
import { buildDeliveryStatusNotification, type DsnOptions } from '../smtp/simulator.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { deliverReport } from './helpers/notice-listener.js';
import { mailApi, startSendStack, waitFor } from './helpers/send-stack.js';
import { qmailBounce } from './helpers/qmail-bounce.js';

/**
 * Bounce reasons end to end (issue 17): one classifier for the send worker's synchronous replies
 * (a worker process, real SMTP to the mailbox simulator) and the inbound listener's late reports
 * (real smtp-server on loopback); the reason on mail_bounces, on GET /v1/mails/{id}/logs rows
 * (bounce_reason) and, for a hard bounce, the restriction row naming the bounce that caused it.
 * Only a dead address restricts: a "5.0.0 blocked", a refused sender (5.1.8) are soft. A delay
 * report stays a delay, an auto-reply changes nothing, and a VERP report that reached another
 * domain than the mail's sender domain is ignored.
 */
const stack = await startSendStack(t, { label: 'bouncereasons', publicUrl: 'https://track.cartero.test' });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const b = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, b.tenant, { domain: 'other.example', senders: [{ email: 'hello', name: 'Other' }] });
const inbound = await startInboundSmtp({ pool: dbs.pool, port: 0, logger: pino({ level: 'error' }, pino.destination(2)) });
t.teardown(() => inbound.close());
stack.spawnWorker();
const api = mailApi(stack.url, a.headers);
const keys = await reportKeys(dbs.pool);

const locals = ['bounce-sync', 'late-hard', 'late-blocked', 'late-sender', 'delayed', 'vacation', 'forged-domain', 'expired-final', 'late-411', 'late-filtered'];
const sent = await api.send({ from: 'news@send.example', to: locals.map((l) => ({ email: `${l}@example.org` })), subject: 'Hello', text: 'Hello' });
// No assertion before the subtests: tap may end the root test at the first one while fixtures still load.
if (sent.status !== 202) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
const ids = Object.fromEntries((sent.body.mails as Array<{ mail_id: string; to: string }>).map((m) => [m.to.split('@')[0]!, m.mail_id])) as Record<string, string>;
for (const l of locals) await api.waitFinal(ids[l]!);

const verp = (local: string, domain = 'send.example') => `bounce+${ids[local]}.${reportTag(keys.current, ids[local]!)}@${domain}`;
const original = (local: string) => ({
  raw: Buffer.from(`Subject: Hello\r\nTo: ${local}@example.org\r\n\r\n`),
  recipient: `${local}@example.org`,
  mailFrom: verp(local),
  messageId: undefined,
});
const dsn = (local: string, opts?: DsnOptions) => buildDeliveryStatusNotification(original(local), opts);

const deliver = (to: string, raw: string) => deliverReport(inbound.port, to, raw);

const mail = async (local: string) =>
  (await dbs.pool.query<{ status: number; bounce_class: string | null }>('SELECT status, bounce_class FROM mails WHERE mail_id = $1', [ids[local]])).rows[0]!;
const bounce = async (local: string) =>
  (await dbs.pool.query<{ id: string; class: string; source: string; reason: string | null }>('SELECT id, class, source, reason FROM mail_bounces WHERE mail_id = $1 ORDER BY id', [ids[local]])).rows;
const restriction = async (local: string) =>
  (await dbs.pool.query<{ reason: string; bounce_id: string | null }>('SELECT reason, bounce_id FROM mail_restrictions WHERE recipient = $1 AND deleted_at IS NULL', [`${local}@example.org`])).rows;
const lastLog = async (local: string) => (await api.logs(ids[local]!)).at(-1);

t.test('a synchronous 550 5.1.1: hard, reason userunknown on the bounce, the log row and the restriction', async (t) => {
  t.same(await mail('bounce-sync'), { status: 6, bounce_class: 'hard' });
  const [b1] = await bounce('bounce-sync');
  t.match(b1, { class: 'hard', source: 'smtp', reason: 'userunknown' });
  t.match(await lastLog('bounce-sync'), { status: 6, smtp_code: 550, smtp_enhanced: '5.1.1', bounce_reason: 'userunknown' });
  t.same(await restriction('bounce-sync'), [{ reason: 'hard_bounce', bounce_id: b1!.id }], 'the restriction names its bounce');
});

t.test('a late 5.1.1 DSN: hard, reason on the log row (API) and the restriction names the bounce', async (t) => {
  t.equal(await deliver(verp('late-hard'), dsn('late-hard')), '250 2.0.0 Ok: delivery status recorded');
  t.same(await mail('late-hard'), { status: 6, bounce_class: 'hard' });
  const [b1] = await bounce('late-hard');
  t.match(b1, { class: 'hard', source: 'dsn', reason: 'userunknown' });
  t.match(await lastLog('late-hard'), { status: 6, reason: 'dsn', bounce_reason: 'userunknown' });
  t.same(await restriction('late-hard'), [{ reason: 'hard_bounce', bounce_id: b1!.id }]);
});

t.test('a 5.0.0 whose words say blocked, and a refused sender (5.1.8): soft, no restriction', async (t) => {
  await deliver(verp('late-blocked'), dsn('late-blocked', { status: '5.0.0', diagnostic: '550 5.0.0 Blocked - see https://www.spamcop.net/bl.shtml?192.0.2.1' }));
  t.same(await mail('late-blocked'), { status: 6, bounce_class: 'soft' });
  t.match(await bounce('late-blocked'), [{ class: 'soft', reason: 'blocked' }]);
  t.same(await restriction('late-blocked'), []);
  await deliver(verp('late-sender'), dsn('late-sender', { status: '5.1.8', diagnostic: '553 5.1.8 <bounce@send.example>: Sender address rejected: Domain not found' }));
  t.same(await mail('late-sender'), { status: 6, bounce_class: 'soft' });
  t.match(await bounce('late-sender'), [{ class: 'soft', reason: 'rejected' }]);
  t.same(await restriction('late-sender'), [], 'the refused address was the sender, never the recipient');
});

t.test('a delay-only DSN stays a delay: a note with its reason, no bounce', async (t) => {
  t.equal(await deliver(verp('delayed'), dsn('delayed', { action: 'delayed', status: '4.4.1', diagnostic: '421 4.4.1 Connection timed out' })), '250 2.0.0 Ok: delivery status recorded');
  t.same(await mail('delayed'), { status: 3, bounce_class: null });
  t.same(await bounce('delayed'), []);
  t.match(await lastLog('delayed'), { status: 3, reason: 'dsn_delayed', bounce_reason: 'networkerror' });
});

t.test('a delay report that says the queue gave up is a soft bounce, reason expired (issue 27)', async (t) => {
  const raw = dsn('expired-final', { action: 'delayed', status: '4.4.7', diagnostic: '421 4.4.7 Message expired: retry timeout exceeded' });
  t.equal(await deliver(verp('expired-final'), raw), '250 2.0.0 Ok: delivery status recorded');
  t.same(await mail('expired-final'), { status: 6, bounce_class: 'soft' });
  t.match(await bounce('expired-final'), [{ class: 'soft', source: 'dsn', reason: 'expired' }]);
  t.match(await lastLog('expired-final'), { status: 6, bounce_reason: 'expired', bounce_class: 'soft' });
  t.same(await restriction('expired-final'), [], 'soft: no restriction at once');
});

t.test('the reason decides hard or soft, not the class digit (issue 27)', async (t) => {
  // A dead address stated with a 4.1.1: hard all the same.
  await deliver(verp('late-411'), dsn('late-411', { status: '4.1.1', diagnostic: '450 4.1.1 <late-411@example.org>: Recipient address rejected: User unknown in local recipient table' }));
  t.same(await mail('late-411'), { status: 6, bounce_class: 'hard' });
  t.match(await lastLog('late-411'), { bounce_reason: 'userunknown', bounce_class: 'hard' });
  t.match(await restriction('late-411'), [{ reason: 'hard_bounce' }]);
  // A recipient's filter with a 5.x.x: soft, the address is alive.
  await deliver(verp('late-filtered'), dsn('late-filtered', { status: '5.7.1', diagnostic: '550 5.7.1 Message rejected due to user rules' }));
  t.same(await mail('late-filtered'), { status: 6, bounce_class: 'soft' });
  t.match(await lastLog('late-filtered'), { bounce_reason: 'filtered', bounce_class: 'soft' });
  t.same(await restriction('late-filtered'), []);
});

t.test('an auto-reply (RFC 3834) to the return path changes nothing', async (t) => {
  const before = await api.logs(ids.vacation!);
  const reply = ['From: vacation@example.org', `To: ${verp('vacation')}`, 'Subject: Automatic reply: Hello', 'Auto-Submitted: auto-replied', '', 'I am out of the office until Monday.', ''].join('\r\n');
  t.equal(await deliver(verp('vacation'), reply), '250 2.0.0 Ok: ignored');
  t.same(await mail('vacation'), { status: 3, bounce_class: null });
  t.same(await api.logs(ids.vacation!), before);
});

t.test("a VERP report at another domain than the mail's sender domain is ignored; at its own domain, a text bounce applies", async (t) => {
  const qmail = qmailBounce('forged-domain@example.org', [`To: ${verp('forged-domain')}`]);
  t.equal(await deliver(verp('forged-domain', 'other.example'), qmail), '250 2.0.0 Ok: ignored', "another tenant's domain: ignored");
  t.same(await mail('forged-domain'), { status: 3, bounce_class: null });
  t.equal(await deliver(verp('forged-domain', 'bounces.send.example'), qmail), '250 2.0.0 Ok: delivery status recorded', 'the return-path subdomain of the sender domain');
  t.same(await mail('forged-domain'), { status: 6, bounce_class: 'hard' });
  t.match(await bounce('forged-domain'), [{ class: 'hard', source: 'dsn', reason: 'userunknown' }]);
});

t.test('the ClickHouse events of the moves to bounced carry the reason (the worker\'s event pump)', async (t) => {
  const ch = createClickHouseClient(dbs.clickhouseUrl);
  t.teardown(() => ch.close());
  const want = { 'bounce-sync': 'userunknown', 'late-hard': 'userunknown', 'late-blocked': 'blocked', 'late-sender': 'rejected' } as Record<string, string>;
  const rows = await waitFor('the bounced events in ClickHouse', async () => {
    const rs = await ch.query({
      query: `SELECT mail_id, bounce_reason FROM mail_events FINAL WHERE event_type = 'bounced' AND mail_id IN {ids:Array(String)} ORDER BY mail_id`,
      query_params: { ids: Object.keys(want).map((l) => ids[l]!) },
      format: 'JSONEachRow',
    });
    const got = (await rs.json()) as Array<{ mail_id: string; bounce_reason: string | null }>;
    return got.length === Object.keys(want).length ? got : undefined;
  });
  t.same(
    Object.fromEntries(rows.map((r) => [Object.keys(want).find((l) => ids[l] === r.mail_id)!, r.bounce_reason])),
    want,
  );
  const other = await ch.query({ query: `SELECT count() AS n FROM mail_events FINAL WHERE event_type <> 'bounced' AND bounce_reason IS NOT NULL`, format: 'JSONEachRow' });
  t.same(await other.json(), [{ n: '0' }], 'no reason on any other event');
});
