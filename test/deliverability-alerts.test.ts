import { DateTime } from 'luxon';
import t from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { countsBy, type Counts } from '../analytics/deliverability/counts.js';
import { nextAlert, readingsOf, recordAlerts, type Reading } from '../domain/deliverability/alerts.js';
import { dashboardRange } from '../domain/panel/dashboard-range.js';
import { deliverabilityAlertsJob, evaluateDeliverabilityAlerts } from '../workers/jobs/deliverability-alerts.js';
import { JOBS } from '../workers/jobs/index.js';
import { testDatabases } from './helpers/databases.js';
import { complainAbout, deliver, startTestInbound, type Delivered } from './helpers/delivered.js';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { mailApi } from './helpers/send-stack.js';
import { childEnv, spawnNode, TEST_DKIM_KEY } from './helpers/spawn.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';
import { startReceiver, verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * The deliverability alerts (docs/deliverability.md, "Alerts") on real activity: mails accepted
 * over HTTP and taken through the send worker's steps with the mailbox simulator's replies
 * (test/helpers/delivered.ts: hard bounces for bounce-*, real ARF reports to the inbound listener
 * for complaint-*), each recipient's provider by its domain's name (yahoo.com, outlook.com,
 * gmail.com). A worker dyno (its own process) ships them to ClickHouse (event pump) and fans the
 * alerts' outbox rows out to a real receiver on loopback. The evaluation is called here, step by
 * step, with a small minimum volume; the worker's own minute runs have a minimum no test
 * reaches (DELIVERABILITY_ALERT_MIN_DELIVERED=1000000), so they never emit and never race the
 * steps (their duplicates would be refused by the same claim anyway).
 *
 * The expected events are worked out by hand from the thresholds (complaints 0.1 % / 0.3 %,
 * hard bounces 2 % / 5 %), not by a second copy of the rules.
 */
const MIN = 10;
const PUBLIC_URL = 'https://alerts.cartero.test';
const TZ = 'Pacific/Kiritimati'; // UTC+14: its local date is rarely the UTC one, so a wrong zone shows
const dbs = await testDatabases(t, 'delivalerts');
const pool = dbs.pool;
const web = await startTestWeb(t, dbs, { env: { PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: 'true' } });
const worker = spawnNode(t, 'dist/runtime/worker.js', {
  env: childEnv(
    {
      DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, PUBLIC_URL, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: 'true',
      DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY, DELIVERABILITY_ALERT_MIN_DELIVERED: '1000000',
    },
    ['SMTP_URL', 'DATA_DIR', 'PORT', 'INBOUND_SMTP_PORT'],
  ),
});
t.teardown(() => {
  if (process.env.ALERTS_TEST_DEBUG) console.error(worker.stdout(), worker.stderr());
});
const inboundPort = await startTestInbound(t, pool);
const receiver = await startReceiver(t);
const ch = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => ch.close());

const scopes = ['mail:send', 'mail:read', 'webhooks:read', 'webhooks:write'];
const a = await makeTenant(pool, { scopes, tz: TZ });
const b = await makeTenant(pool, { scopes });
await makeSenders(pool, a.tenant, { domain: 'alerts.example', senders: [{ email: 'news', name: 'News' }] });
await makeSenders(pool, a.tenant, { domain: 'bulk.example', senders: [{ email: 'promo', name: 'Promo' }] });
// B sends from a domain of the same name (names are unique per instance), to the same provider.
await makeSenders(pool, b.tenant, { domain: 'alerts.example', senders: [{ email: 'news', name: 'News B' }] });

const TYPES = ['deliverability.threshold_crossed', 'deliverability.threshold_recovered'];
async function createHook(who: TestTenant, path: string) {
  const r = await mailApi(web.url, who.headers).call('POST', '/v1/webhooks', { name: path, url: receiver.url(path), events: TYPES });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; secret: string };
}
const hookA = await createHook(a, '/a');
const hookB = await createHook(b, '/b');

/** Accepted over HTTP, then taken through the send worker's steps (at most 400 recipients a send). */
async function sendAndDeliver(who: TestTenant, from: string, recipients: string[]): Promise<Map<string, Delivered>> {
  const api = mailApi(web.url, who.headers);
  const out = new Map<string, Delivered>();
  for (let i = 0; i < recipients.length; i += 400) {
    const r = await api.send({ from, to: recipients.slice(i, i + 400).map((email) => ({ email })), subject: 'Alerts', html: '<p>Hello</p>' });
    if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
    const mails = r.body.mails as Array<{ mail_id: string; to: string }>;
    const done = await deliver(who.tenant, pool, mails.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
    for (const m of mails) out.set(m.to, done.get(m.mail_id)!);
  }
  return out;
}
const many = (n: number, prefix: string, domain: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}@${domain}`);

// What each instance's (provider, domain) should count today, kept as the activity is made.
type Key = `${string} ${string}`;
const expected = new Map<TestTenant, Map<Key, Pick<Counts, 'delivered' | 'bounced_hard' | 'complaints'>>>();
function expect(who: TestTenant, provider: string, domain: string, add: { delivered?: number; bounced_hard?: number; complaints?: number }) {
  const mine = expected.get(who) ?? new Map();
  expected.set(who, mine);
  const c = mine.get(`${provider} ${domain}`) ?? { delivered: 0, bounced_hard: 0, complaints: 0 };
  mine.set(`${provider} ${domain}`, {
    delivered: c.delivered + (add.delivered ?? 0), bounced_hard: c.bounced_hard + (add.bounced_hard ?? 0), complaints: c.complaints + (add.complaints ?? 0),
  });
}
const today = (who: TestTenant) => DateTime.now().setZone(who.tenant.tz ?? 'UTC').toISODate()!;

/** Until ClickHouse counts today what was made (the worker's pump ships within moments). */
async function settled() {
  for (const [who, keys] of expected) {
    const range = dashboardRange({ start_date: today(who), end_date: today(who) }, who.tenant.tz);
    await waitFor(`${who.slug}'s counts in ClickHouse`, async () => {
      const rows = await countsBy(who.tenant, ch, range, {}, ['provider', 'domain']);
      const got = new Map(rows.map((r) => [`${r.provider} ${r.domain}`, r]));
      for (const [k, c] of keys) {
        const r = got.get(k as Key);
        if (!r || r.delivered !== c.delivered || r.bounced_hard !== c.bounced_hard || r.complaints !== c.complaints) return undefined;
      }
      return true;
    }, { ms: 60_000 });
  }
}

const evaluate = () => evaluateDeliverabilityAlerts({ pool, clickhouse: ch, minDelivered: MIN });

/** The deliveries at `path` once there are `n` of them, as {type, data}, sorted for comparison. */
async function receivedAt(path: string, n: number): Promise<Array<{ type: string; data: any }>> {
  const rs = await waitFor(`${n} deliveries at ${path}`, () => (receiver.at(path).filter((r) => r.answered === 200).length >= n ? receiver.at(path) : undefined), { ms: 60_000 });
  return rs.map((r: Received) => ({ type: r.event.type, data: r.event.data }));
}
const sorted = <T extends { data: any }>(xs: T[]) =>
  [...xs].sort((x, y) => JSON.stringify([x.data.provider, x.data.domain, x.data.metric]).localeCompare(JSON.stringify([y.data.provider, y.data.domain, y.data.metric])));
const event = (type: 'crossed' | 'recovered', who: TestTenant, d: {
  provider: string; domain: string; metric: string; rate: number; threshold: number; status: string; delivered: number; volume: number; count: number;
}) => ({ type: `deliverability.threshold_${type}`, data: { provider: d.provider, domain: d.domain, metric: d.metric, rate: d.rate, threshold: d.threshold, status: d.status, date: today(who), delivered: d.delivered, volume: d.volume, count: d.count } });

t.test('the rules: the volume of each metric, no_data never alerts, a crossed status once a day', async (t) => {
  const counts = { delivered: 9, bounced_hard: 1, bounced_soft: 0, complaints: 1 };
  t.strictSame(readingsOf('yahoo', 'x.example', counts, 10).map((r) => [r.metric, r.volume]), [['bounce_rate', 10]],
    'bounce_rate counts delivered + bounced toward the minimum; complaint_rate only delivered');
  t.strictSame(readingsOf('yahoo', 'x.example', { delivered: 0, bounced_hard: 12, bounced_soft: 0, complaints: 0 }, 10).map((r) => [r.metric, r.status, r.rate]),
    [['bounce_rate', 'critical', 1]], 'a sender whose mail all bounces is judged');
  const gmail = readingsOf('gmail', 'x.example', { delivered: 500, bounced_hard: 0, bounced_soft: 0, complaints: 0 }, 10);
  t.equal(gmail.find((r) => r.metric === 'complaint_rate')!.status, 'no_data');
  const reading = (status: Reading['status']): Reading => ({ provider: 'gmail', domain: 'x.example', metric: 'complaint_rate', status, rate: 0, delivered: 500, volume: 500, count: 0 });
  t.equal(nextAlert(undefined, reading('no_data')), undefined, 'no_data: nothing');
  t.equal(nextAlert({ next: 1, status: 'warning', crossed: new Set(['warning']) }, reading('no_data')), undefined, 'no_data after a warning: no recovery either');
  t.equal(nextAlert({ next: 2, status: 'ok', crossed: new Set(['warning']) }, reading('warning')), undefined, 'warning again after a recovery the same day: not told twice');
  t.match(nextAlert({ next: 2, status: 'ok', crossed: new Set(['warning']) }, reading('critical')), { kind: 'crossed', status: 'critical', seq: 2 }, 'a worse one is');
});

t.test('the job is declared, and the worker registered its schedule', async (t) => {
  t.ok(JOBS.includes(deliverabilityAlertsJob), 'in the job list');
  t.equal(deliverabilityAlertsJob.schedule, '* * * * *', 'every minute');
  const row = await waitFor('the schedule in pg-boss', async () => {
    const { rows } = await pool.query(`SELECT cron FROM pgboss.schedule WHERE name = 'deliverability.alerts'`);
    return rows[0];
  }, { ms: 60_000 });
  t.equal(row.cron, '* * * * *');
  const { rows: queue } = await pool.query(`SELECT policy FROM pgboss.queue WHERE name = 'deliverability.alerts'`);
  t.strictSame(queue, [{ policy: 'singleton' }], 'one run at a time across workers');
});

t.test('crossings, recoveries, once per status and day, over a real receiver', async (t) => {
  // ---- 1. Below the minimum volume: 1 complaint in 5 mails at Yahoo (20 %) is no alert. Gmail
  // (no_data without complaints) at volume, nothing either. B's mail at Yahoo, critical for B,
  // is never A's (it would lift A's Yahoo volume past the minimum).
  const y1 = await sendAndDeliver(a, 'news@alerts.example', ['complaint-1@yahoo.com', ...many(4, 'y1-', 'yahoo.com')]);
  await complainAbout(inboundPort, y1.get('complaint-1@yahoo.com')!);
  expect(a, 'yahoo', 'alerts.example', { delivered: 5, complaints: 1 });
  await sendAndDeliver(a, 'news@alerts.example', many(15, 'g-', 'gmail.com'));
  expect(a, 'gmail', 'alerts.example', { delivered: 15 });
  const yb = await sendAndDeliver(b, 'news@alerts.example', [...many(3, 'complaint-b', 'yahoo.com'), ...many(17, 'yb-', 'yahoo.com')]);
  for (let i = 0; i < 3; i++) await complainAbout(inboundPort, yb.get(`complaint-b${i}@yahoo.com`)!);
  expect(b, 'yahoo', 'alerts.example', { delivered: 20, complaints: 3 });
  await settled();
  const r1 = await evaluate();
  t.equal(r1.instances, 2, 'both instances have mail today');
  t.equal(r1.emitted, 1, "only B's alert");
  const bEvents = await receivedAt('/b', 1);
  t.strictSame(bEvents, [event('crossed', b, { provider: 'yahoo', domain: 'alerts.example', metric: 'complaint_rate', rate: 0.15, threshold: 0.003, status: 'critical', delivered: 20, volume: 20, count: 3 })],
    "B's own figures, to B's webhook");

  // ---- 2. Yahoo at 1 in 400 (0.25 %): warning. Outlook.com at 1 hard bounce in 40 (2.5 %):
  // warning. bulk.example's mail all bounces at Outlook.com (12 of 12): critical at once, with
  // nothing delivered.
  const y2 = await sendAndDeliver(a, 'news@alerts.example', ['complaint-2@yahoo.com', ...many(394, 'y2-', 'yahoo.com')]);
  expect(a, 'yahoo', 'alerts.example', { delivered: 395 });
  await sendAndDeliver(a, 'news@alerts.example', ['bounce-1@outlook.com', ...many(39, 'o2-', 'outlook.com')]);
  expect(a, 'microsoft', 'alerts.example', { delivered: 39, bounced_hard: 1 });
  await sendAndDeliver(a, 'promo@bulk.example', many(12, 'bounce-bulk', 'outlook.com'));
  expect(a, 'microsoft', 'bulk.example', { bounced_hard: 12 });
  await settled();
  t.equal((await evaluate()).emitted, 3);
  const step2 = [
    event('crossed', a, { provider: 'microsoft', domain: 'alerts.example', metric: 'bounce_rate', rate: 0.025, threshold: 0.02, status: 'warning', delivered: 39, volume: 40, count: 1 }),
    event('crossed', a, { provider: 'microsoft', domain: 'bulk.example', metric: 'bounce_rate', rate: 1, threshold: 0.05, status: 'critical', delivered: 0, volume: 12, count: 12 }),
    event('crossed', a, { provider: 'yahoo', domain: 'alerts.example', metric: 'complaint_rate', rate: 0.0025, threshold: 0.001, status: 'warning', delivered: 400, volume: 400, count: 1 }),
  ];
  t.strictSame(sorted(await receivedAt('/a', 3)), step2, 'warnings, and a critical straight from ok');
  t.equal((await evaluate()).emitted, 0, 'evaluated again: nothing new');

  // ---- 3. A second complaint (2 in 400: 0.5 %) and two more bounces (3 in 42: 7.1 %): critical.
  // Three evaluations at once (three workers): one event each, not three.
  await complainAbout(inboundPort, y2.get('complaint-2@yahoo.com')!);
  expect(a, 'yahoo', 'alerts.example', { complaints: 1 });
  await sendAndDeliver(a, 'news@alerts.example', ['bounce-2@outlook.com', 'bounce-3@outlook.com']);
  expect(a, 'microsoft', 'alerts.example', { bounced_hard: 2 });
  await settled();
  const together = await Promise.all([evaluate(), evaluate(), evaluate()]);
  t.equal(together.reduce((n, r) => n + r.emitted, 0), 2, 'two events between the three evaluations');
  const step3 = [
    event('crossed', a, { provider: 'microsoft', domain: 'alerts.example', metric: 'bounce_rate', rate: 0.071429, threshold: 0.05, status: 'critical', delivered: 39, volume: 42, count: 3 }),
    event('crossed', a, { provider: 'yahoo', domain: 'alerts.example', metric: 'complaint_rate', rate: 0.005, threshold: 0.003, status: 'critical', delivered: 400, volume: 400, count: 2 }),
  ];
  t.strictSame(sorted((await receivedAt('/a', 5)).slice(3)), step3, 'warning → critical');

  // A worker that claimed an alert and died before it knew (or a stale read): the claim refuses
  // the same alert again, and appends no event.
  const { rows: claimed } = await pool.query(
    `SELECT provider, domain, metric, seq, kind, status, rate, threshold, delivered::int, volume::int, count::int, day::text
       FROM deliverability_alerts WHERE instance_id = $1 AND provider = 'yahoo' AND status = 'critical'`, [a.tenant.instanceId]);
  t.equal(claimed.length, 1);
  t.strictSame(await recordAlerts(pool, a.tenant, claimed[0].day, [claimed[0]]), [], 'claimed twice: no second event');

  // ---- 4. More delivered mail brings the rates down: Yahoo 2 in 700 (0.29 %) and Outlook.com
  // 3 in 102 (2.9 %) recover to warning.
  const y4 = await sendAndDeliver(a, 'news@alerts.example', ['complaint-3@yahoo.com', ...many(299, 'y4-', 'yahoo.com')]);
  expect(a, 'yahoo', 'alerts.example', { delivered: 300 });
  await sendAndDeliver(a, 'news@alerts.example', many(60, 'o4-', 'outlook.com'));
  expect(a, 'microsoft', 'alerts.example', { delivered: 60 });
  await settled();
  t.equal((await evaluate()).emitted, 2);
  const step4 = [
    event('recovered', a, { provider: 'microsoft', domain: 'alerts.example', metric: 'bounce_rate', rate: 0.029412, threshold: 0.05, status: 'warning', delivered: 99, volume: 102, count: 3 }),
    event('recovered', a, { provider: 'yahoo', domain: 'alerts.example', metric: 'complaint_rate', rate: 0.002857, threshold: 0.003, status: 'warning', delivered: 700, volume: 700, count: 2 }),
  ];
  t.strictSame(sorted((await receivedAt('/a', 7)).slice(5)), step4, 'critical → warning, the threshold fallen below');

  // ---- 5. Yahoo critical again (3 in 700: 0.43 %): already crossed today, not told twice.
  // Outlook.com 3 in 162 (1.85 %): back to ok.
  await complainAbout(inboundPort, y4.get('complaint-3@yahoo.com')!);
  expect(a, 'yahoo', 'alerts.example', { complaints: 1 });
  await sendAndDeliver(a, 'news@alerts.example', many(60, 'o5-', 'outlook.com'));
  expect(a, 'microsoft', 'alerts.example', { delivered: 60 });
  await settled();
  t.equal((await evaluate()).emitted, 1);
  t.strictSame((await receivedAt('/a', 8)).slice(7), [
    event('recovered', a, { provider: 'microsoft', domain: 'alerts.example', metric: 'bounce_rate', rate: 0.018519, threshold: 0.02, status: 'ok', delivered: 159, volume: 162, count: 3 }),
  ], 'warning → ok');
  t.equal((await evaluate()).emitted, 0, 'and nothing more');

  // Exactly these: the outbox holds no other alert of A (so no later delivery can add one), every
  // one was fanned out, and each reached the receiver once, signed.
  const { rows: outbox } = await pool.query(
    `SELECT count(*)::int AS n, bool_and(webhooks_done) AS done FROM event_outbox WHERE instance_id = $1 AND kind LIKE 'deliverability.%'`, [a.tenant.instanceId]);
  t.strictSame(outbox, [{ n: 8, done: true }], "A's eight events, all fanned out");
  const atA = receiver.at('/a');
  t.equal(new Set(atA.map((r) => r.headers['webhook-id'])).size, atA.length, 'no delivery twice');
  t.equal(atA.length, 8);
  t.ok(atA.every((r) => verifies(hookA.secret, r)), 'each verifies with standardwebhooks');
  t.ok(receiver.at('/b').every((r) => verifies(hookB.secret, r)));
  t.equal(receiver.at('/b').length, 1, 'B: its one event');
  t.notOk(atA.some((r) => r.event.data.provider === 'gmail'), 'nothing for Gmail: its complaints are no_data');
});

t.test('the OpenAPI document and the docs catalogue both events', async (t) => {
  const doc = (await mailApi(web.url, a.headers).call('GET', '/v1/openapi.json')).body;
  for (const type of TYPES) {
    t.same(Object.keys(doc.webhooks[type].post.requestBody.content['application/json'].schema.properties.data.properties),
      ['provider', 'domain', 'metric', 'rate', 'threshold', 'status', 'date', 'delivered', 'volume', 'count'], type);
  }
});
