import t from 'tap';
import pino from 'pino';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { backdate, complainAbout, deliver, deliveryBench, startTestPump, trackingLinks } from './helpers/delivered.js';
import { mailApi } from './helpers/send-stack.js';
import { waitFor } from './helpers/wait.js';
import { loadConfig } from '../config/config.js';
import { readChecked } from '../analytics/activities/rows.js';
import { staleBucketsQuery } from '../analytics/deliverability/buckets.js';
import { rollUpProviderCounts } from '../analytics/deliverability/rollup.js';
import { createClickHouseClient } from '../analytics/client.js';
import { dashboardRange } from '../domain/panel/dashboard-range.js';
import { PROVIDER_MX_QUEUE } from '../domain/job-queue.js';
import { purgeRecipientDomains } from '../domain/mail/recipient-mx.js';
import { PREFETCH_SECONDS } from '../domain/tracking/machine.js';
import { providerMxJob } from '../workers/jobs/provider-mx.js';
import { JOBS } from '../workers/jobs/index.js';
import type { JobContext } from '../workers/machinery/job.js';

/**
 * Issue 40, "Providers" and "Figures", end to end: mails sent through the API to the consumer
 * domains of each large provider and to company domains whose MX the test DNS server publishes
 * (Google Workspace, Microsoft 365, none), taken through the send worker's steps with the mailbox
 * simulator's replies (test/helpers/delivered.ts: delivered, hard and soft bounces, a deferral),
 * a complaint sent back as a real ARF report to the inbound listener, an RFC 8058 one-click
 * unsubscribe, opens by a person and by a machine, the pump shipping it all to ClickHouse. Then
 * GET /v1/deliverability/providers and /daily are compared, provider by provider, with what the
 * public listings count for the same range, grouped by the recipient's provider; and the statuses
 * with the thresholds. Nothing is a hard-coded answer but the shape of the activity made.
 */

const PUBLIC_URL = 'https://links.prov.test';
const { dbs, url, pool, inboundPort } = await deliveryBench(t, 'providers', PUBLIC_URL);
const dns = await startTestDnsServer(t);
dns.mx('acme-corp.com', 'aspmx.l.google.com', 1);
dns.mx('acme-corp.com', 'alt1.aspmx.l.google.com', 5);
dns.mx('contoso.com', 'contoso-com.mail.protection.outlook.com', 0);
dns.txt('nomx.net', 'v=spf1 -all'); // the name exists, without MX

const a = await makeTenant(pool, { scopes: ['mail:send', 'mail:read'] });
const b = await makeTenant(pool, { scopes: ['mail:send', 'mail:read'] });
const noRead = await makeTenant(pool, { scopes: ['mail:send'] });
await makeSenders(pool, a.tenant, { domain: `${a.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
await makeSenders(pool, a.tenant, { domain: `alt-${a.slug}.example`, senders: [{ email: 'hello', name: 'Hello' }] });
await makeSenders(pool, b.tenant, { domain: `${b.slug}.example`, senders: [{ email: 'news', name: 'News' }] });

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const local = (link: string) => url + link.slice(PUBLIC_URL.length);

async function send(who: TestTenant, from: string, recipients: string[]) {
  const r = await mailApi(url, who.headers).send({ from, to: recipients.map((email) => ({ email })), subject: 'Providers', html: '<p>Hi <a href="https://shop.example/a">A</a></p>' });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.mails as Array<{ mail_id: string; to: string }>;
}

/** Runs the resolve jobs acceptance queued, through the job's own handler, against the test DNS server. */
async function resolveQueued(): Promise<string[]> {
  const { rows } = await pool.query<{ domain: string }>(`SELECT data->>'domain' AS domain FROM pgboss.job WHERE name = $1 AND state = 'created' ORDER BY 1`, [PROVIDER_MX_QUEUE]);
  const ctx = { pool, config: loadConfig({ DATABASE_URL: dbs.databaseUrl, DNS_SERVERS: dns.address }), logger: pino({ level: 'silent' }) } as unknown as JobContext;
  for (const r of rows) await providerMxJob.handle(providerMxJob.parse({ domain: r.domain })!, ctx);
  await pool.query(`DELETE FROM pgboss.job WHERE name = $1`, [PROVIDER_MX_QUEUE]);
  return rows.map((r) => r.domain);
}

const providerOfMail = async (mailId: string) => (await pool.query<{ provider: string }>('SELECT provider FROM mails WHERE mail_id = $1', [mailId])).rows[0]!.provider;

// ---- The activity. ----
const firstCompany = await send(a, `news@${a.slug}.example`, ['first@acme-corp.com', 'first@contoso.com', 'first@nomx.net']);
const queuedDomains = await resolveQueued();
const sent = [
  ...firstCompany,
  ...(await send(a, `news@${a.slug}.example`, [
    'reader@gmail.com', 'bounce-g@gmail.com', 'r2@googlemail.com',
    'reader@yahoo.com', 'complaint-y@yahoo.com', 'bounce-y@yahoo.co.uk', 'softbounce-y@aol.com', 'leaving@ymail.com',
    'reader@outlook.com', 'r2@hotmail.fr', 'r3@live.com',
    'reader@icloud.com', 'reader@web.de', 'reader@example.org',
    'second@acme-corp.com', 'second@contoso.com', 'second@nomx.net',
  ])),
  ...(await send(a, `hello@alt-${a.slug}.example`, ['alt@gmail.com', 'bounce-alt@yahoo.com'])),
];
const stuck = await send(a, `news@${a.slug}.example`, ['defer-y@yahoo.com']);
const sentB = await send(b, `news@${b.slug}.example`, ['b@gmail.com', 'bounce-b@yahoo.com']);
const requeued = await resolveQueued();

const delivered = await deliver(a.tenant, pool, sent.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
await deliver(b.tenant, pool, sentB.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
// A mail left deferred: its first try's 451 is recorded, and its retry has not come yet.
await deliver(a.tenant, pool, [stuck[0]!.mail_id], { publicUrl: PUBLIC_URL, maxTries: 1 });
const byTo = new Map(sent.map((m) => [m.to, m.mail_id]));
await complainAbout(inboundPort, delivered.get(byTo.get('complaint-y@yahoo.com')!)!);
// RFC 8058 one-click, as Yahoo's and Gmail's buttons post it.
const leaving = delivered.get(byTo.get('leaving@ymail.com')!)!.rendered!;
const unsubscribeUrl = /<(https:[^>]+)>/.exec(leaving.headers.find((h) => h.key === 'List-Unsubscribe')!.value)![1]!;
const unsub = await fetch(local(unsubscribeUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
await unsub.body?.cancel();
// Opens: a person at Gmail and at Outlook.com, a machine (no user agent) at Yahoo.
const open = async (to: string, ua: string) => (await fetch(local(trackingLinks(delivered.get(byTo.get(to)!)!.rendered).pixel), { headers: { 'user-agent': ua } })).arrayBuffer();
// Past the prefetch window after delivery (opens inside it are a proxy's), without waiting it out.
await backdate(a.tenant, pool, sent.map((m) => m.mail_id), PREFETCH_SECONDS + 1);
await open('reader@gmail.com', BROWSER);
await open('reader@outlook.com', BROWSER);
await open('reader@yahoo.com', '');
startTestPump(t, dbs);

const api = (path: string, who: TestTenant = a) => jsonCall(url, 'GET', path, undefined, who.headers);

async function all(who: TestTenant, path: string, params: Record<string, string>): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const r = await api(`${path}?${new URLSearchParams({ ...params, page: String(page), page_size: '100' })}`, who);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    rows.push(...r.body.data);
    if (!r.body.pagination.has_more) return rows;
  }
}

await waitFor('the outbox to be shipped', async () => {
  const left = await pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE stage < 2`);
  return left.rows[0].n === 0 ? true : undefined;
}, { ms: 60_000 });
await waitFor('the complaint and the unsubscribe in the listings', async () =>
  (await all(a, '/v1/mail-complaints', {})).length === 1 && (await all(a, '/v1/activities/sent', {})).length === sent.length + 1 ? true : undefined, { ms: 60_000 });

/** The provider a recipient's mail was attributed to, as the tests expect it from the domain. */
const EXPECTED: Record<string, string> = {
  'gmail.com': 'gmail', 'googlemail.com': 'gmail', 'yahoo.com': 'yahoo', 'yahoo.co.uk': 'yahoo', 'aol.com': 'yahoo', 'ymail.com': 'yahoo',
  'outlook.com': 'microsoft', 'hotmail.fr': 'microsoft', 'live.com': 'microsoft', 'icloud.com': 'apple', 'web.de': 'gmx',
  'example.org': 'other', 'acme-corp.com': 'google_workspace', 'contoso.com': 'microsoft_365', 'nomx.net': 'other',
};
const expectedOf = (to: string) => (to.startsWith('first@') ? 'other' : EXPECTED[to.slice(to.indexOf('@') + 1)]!);

t.test('attribution: by name at once, by MX once the worker looked it up, other until then', async (t) => {
  t.strictSame(queuedDomains, ['acme-corp.com', 'contoso.com', 'nomx.net'], 'one resolve job per company domain, none for consumer or reserved names');
  t.strictSame(requeued, [], 'a domain already known queues nothing');
  const cached = await pool.query('SELECT domain, provider FROM recipient_domains ORDER BY domain');
  t.strictSame(cached.rows, [
    { domain: 'acme-corp.com', provider: 'google_workspace' },
    { domain: 'contoso.com', provider: 'microsoft_365' },
    { domain: 'nomx.net', provider: 'other' },
  ]);
  for (const m of [...sent, ...stuck]) t.equal(await providerOfMail(m.mail_id), expectedOf(m.to), `${m.to} → ${expectedOf(m.to)}`);
  const chUrl = new URL(dbs.clickhouseUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(chUrl.username)}:${decodeURIComponent(chUrl.password)}`).toString('base64')}`;
  const database = chUrl.pathname.replace(/^\/|\/$/g, '');
  const query = `SELECT recipient, provider FROM mails FINAL WHERE instance_id = ${a.tenant.instanceId} ORDER BY recipient FORMAT JSONEachRow`;
  const ch = await fetch(`${chUrl.protocol}//${chUrl.host}/?database=${database}&query=${encodeURIComponent(query)}`, { headers: { authorization: auth } });
  const mirrored = (await ch.text()).trim().split('\n').map((l) => JSON.parse(l));
  t.equal(mirrored.length, sent.length + 1);
  for (const r of mirrored) t.equal(r.provider, expectedOf(r.recipient), `ClickHouse's mirror: ${r.recipient}`);
});

/** The listings' counts for a range, per provider of the recipient. */
async function listingFigures(who: TestTenant, params: Record<string, string>, domain?: string) {
  const fromDomain = (r: any) => domain === undefined || r.sender?.endsWith(`@${domain}`);
  const sentRows = (await all(who, '/v1/activities/sent', params));
  const bySender = new Map(sentRows.map((r) => [r.mail_id, r]));
  const per = new Map<string, any>();
  const row = (p: string) => {
    if (!per.has(p)) per.set(p, { sent: 0, delivered: 0, deferred: 0, bounced_hard: 0, bounced_soft: 0, complaints: 0, unsubscribed: 0, opened: 0, opened_human: 0 });
    return per.get(p);
  };
  for (const m of sentRows.filter(fromDomain)) {
    const f = row(expectedOf(m.to));
    f.sent++;
    if (m.status === 3) f.delivered++;
    if (m.status === 5) f.deferred++;
    if (m.status === 6) {
      const logs = await mailApi(url, who.headers).logs(m.mail_id);
      if (logs.filter((l: any) => l.status === 6).at(-1)?.bounce_class === 'hard') f.bounced_hard++;
      else f.bounced_soft++;
    }
  }
  for (const c of await all(who, '/v1/mail-complaints', params)) {
    const m = bySender.get(c.mail_id);
    if (m && fromDomain(m)) row(expectedOf(m.to)).complaints++;
  }
  for (const o of await all(who, '/v1/activities/opens', params)) {
    const m = bySender.get(o.mail_id);
    if (m && fromDomain(m)) row(expectedOf(m.to)).opened++;
  }
  for (const o of await all(who, '/v1/activities/opens', { ...params, exclude_machine: 'true' })) {
    const m = bySender.get(o.mail_id);
    if (m && fromDomain(m)) row(expectedOf(m.to)).opened_human++;
  }
  return per;
}

t.test('GET /v1/deliverability/providers: each count equals what the listings count for the same range', async (t) => {
  const res = await api('/v1/deliverability/providers');
  t.equal(res.status, 200, JSON.stringify(res.body));
  const listed = await listingFigures(a, { start_date: res.body.start_date, end_date: res.body.end_date, tz: res.body.tz });
  const rows = new Map(res.body.data.map((r: any) => [r.provider, r]));
  t.strictSame([...rows.keys()].sort(), [...listed.keys()].sort(), 'one row per provider with mail');
  for (const [provider, expected] of listed) {
    const { unsubscribed: _u, ...counts } = expected;
    t.match(rows.get(provider), counts, provider);
  }
  const yahoo: any = rows.get('yahoo');
  t.match(yahoo, { sent: 7, delivered: 3, deferred: 1, bounced_hard: 2, bounced_soft: 1, complaints: 1, unsubscribed: 1, opened: 1, opened_human: 0 });
  // 1 complaint of 3 delivered; 2 hard bounces of 6 answered.
  t.equal(yahoo.complaint_rate, 0.333333);
  t.equal(yahoo.complaint_status, 'critical');
  t.equal(yahoo.bounce_rate, 0.333333);
  t.equal(yahoo.bounce_status, 'critical');
  const gmail: any = rows.get('gmail');
  t.match(gmail, { sent: 4, delivered: 3, bounced_hard: 1, complaints: 0, opened: 1, opened_human: 1, complaint_rate: 0 });
  t.equal(gmail.complaint_status, 'no_data', "Gmail sends no per-message complaints: its 0 is not 0 %");
  const microsoft: any = rows.get('microsoft');
  t.match(microsoft, { sent: 3, delivered: 3, complaints: 0, complaint_rate: 0, complaint_status: 'ok', bounce_rate: 0, bounce_status: 'ok' });
  t.match(rows.get('google_workspace'), { sent: 1, delivered: 1 });
  t.match(rows.get('microsoft_365'), { sent: 1, delivered: 1 });
  t.match(rows.get('other'), { sent: 5 }, 'example.org, the company domains before their MX was known, nomx.net');
  t.ok(res.body.data.every((r: any, i: number, rs: any[]) => i === 0 || rs[i - 1].sent >= r.sent), 'most mails first');
});

t.test('domain= narrows to one sending domain; another instance is never counted', async (t) => {
  const res = await api(`/v1/deliverability/providers?domain=ALT-${a.slug}.example`);
  t.equal(res.status, 200);
  t.strictSame(res.body.data.map((r: any) => [r.provider, r.sent, r.delivered, r.bounced_hard]), [['gmail', 1, 1, 0], ['yahoo', 1, 0, 1]]);
  const listed = await listingFigures(a, { start_date: res.body.start_date, end_date: res.body.end_date, tz: res.body.tz }, `alt-${a.slug}.example`);
  t.equal(listed.get('gmail').sent, 1);
  const other = await api('/v1/deliverability/providers', b);
  t.strictSame(other.body.data.map((r: any) => [r.provider, r.sent]), [['gmail', 1], ['yahoo', 1]], "B's own only");
  t.strictSame((await api(`/v1/deliverability/providers?domain=${b.slug}.example`)).body.data, [], "A asking for B's domain: nothing");
});

t.test('GET /v1/deliverability/providers/{provider}/daily: every day of the range, summing to the totals', async (t) => {
  const totals = (await api('/v1/deliverability/providers')).body.data.find((r: any) => r.provider === 'yahoo');
  const res = await api('/v1/deliverability/providers/yahoo/daily');
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.provider, 'yahoo');
  t.equal(res.body.days.length, 30);
  for (const k of ['sent', 'delivered', 'deferred', 'bounced_hard', 'bounced_soft', 'complaints', 'unsubscribed', 'opened', 'opened_human']) {
    t.equal(res.body.days.reduce((s: number, d: any) => s + d[k], 0), totals[k], `sum of ${k}`);
  }
  const quiet = res.body.days.find((d: any) => d.sent === 0 && d.complaints === 0);
  t.match(quiet, { complaint_rate: null, bounce_rate: null, complaint_status: 'no_data', bounce_status: 'no_data' }, 'a day without mail');
  const one = await api(`/v1/deliverability/providers/gmail/daily?start_date=${res.body.end_date}&end_date=${res.body.end_date}&tz=${res.body.tz}`);
  t.equal(one.body.days.length, 1);
});

t.test('bad input is a clear 4xx, never a 500; the scope is mail:read', async (t) => {
  t.equal((await api('/v1/deliverability/providers/hotmail/daily')).status, 422, 'not a provider id');
  t.equal((await api('/v1/deliverability/providers?tz=Mars/Olympus')).status, 422);
  t.equal((await api('/v1/deliverability/providers?start_date=2026-01-01&end_date=2026-12-31')).status, 422, 'over 92 days');
  t.equal((await api('/v1/deliverability/providers', noRead)).status, 403);
  t.equal((await jsonCall(url, 'GET', '/v1/deliverability/providers', undefined, {})).status, 401);
});

t.test('kept counts (provider_counts): the same figures once counted, a changed bucket read live until counted again', async (t) => {
  const ch = createClickHouseClient(dbs.clickhouseUrl);
  t.teardown(() => ch.close());
  const paths = ['/v1/deliverability/providers', `/v1/deliverability/providers?domain=alt-${a.slug}.example`, '/v1/deliverability/providers/yahoo/daily'];
  const answers = async () => Promise.all(paths.map(async (p) => (await api(p)).body));
  const live = await answers();
  const range = dashboardRange({}, null);
  const stale = async () => (await readChecked(ch, staleBucketsQuery(a.tenant, range))).length;
  t.ok(await stale() > 0, 'nothing counted yet: every bucket is read live');

  const run = await rollUpProviderCounts(ch, { graceMs: 0 });
  t.ok(run.buckets > 0, `${run.buckets} buckets counted`);
  t.equal(await stale(), 0, 'every bucket of the range is kept');
  t.strictSame(await answers(), live, 'the kept counts give the same answers as counting live');

  // The kept rows are what is read: a forged row (newer than any mark) shows through, and goes.
  const [bucket] = (await readChecked(ch, {
    name: 'test', sql: `SELECT toString(bucket) AS at FROM provider_counts WHERE instance_id = {i:UInt64} AND source = 'received' LIMIT 1`,
    params: { i: a.tenant.instanceId }, columns: [{ name: 'at', kind: 'text' }],
  })).map((r) => String(r.at));
  const zeros = { delivered: [0], deferred: [0], bounced_hard: [0], bounced_soft: [0], complaints: [0], unsubscribed: [0], opened: [0], opened_human: [0] };
  await ch.insert({ table: 'provider_counts', format: 'JSONEachRow', values: [{
    instance_id: a.tenant.instanceId, source: 'received', bucket, covered: '2100-01-01 00:00:00.000', provider: ['gmail'], domain: ['forged.example'], sent: [1000], ...zeros,
  }] });
  const forged = (await api('/v1/deliverability/providers')).body.data.find((r: any) => r.provider === 'gmail');
  t.equal(forged.sent, 1000, 'the newest row of the bucket replaces its counts');
  await ch.command({ query: `DELETE FROM provider_counts WHERE covered > '2099-01-01'` });
  t.strictSame(await answers(), live);

  // A new open changes an old mail's snapshot (its opens) and adds an event: both buckets are stale
  // and counted live, equal to the listings, until the next run counts them.
  await open('reader@outlook.com', BROWSER);
  await waitFor('the open shipped', async () => ((await pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE stage < 2`)).rows[0].n === 0 ? true : undefined));
  t.ok(await stale() > 0, 'the changed buckets are stale');
  const changed = await api('/v1/deliverability/providers');
  const listed = await listingFigures(a, { start_date: changed.body.start_date, end_date: changed.body.end_date, tz: changed.body.tz });
  t.equal(changed.body.data.find((r: any) => r.provider === 'microsoft').opened, listed.get('microsoft').opened, 'the new open counted, live');
  t.equal(listed.get('microsoft').opened, live[0].data.find((r: any) => r.provider === 'microsoft').opened + 1);
  await rollUpProviderCounts(ch, { graceMs: 0 });
  t.equal(await stale(), 0);
  t.strictSame((await api('/v1/deliverability/providers')).body, changed.body, 'counted again: the same answer');
});

t.test('an expired verdict is still used, and its refresh queued once; verdicts unused 30 days after expiry are purged', async (t) => {
  await pool.query(`UPDATE recipient_domains SET expires_at = now() - interval '1 minute' WHERE domain = 'acme-corp.com'`);
  const [m1] = await send(a, `news@${a.slug}.example`, ['third@acme-corp.com']);
  const [m2] = await send(a, `news@${a.slug}.example`, ['fourth@acme-corp.com']);
  t.equal(await providerOfMail(m1!.mail_id), 'google_workspace', 'the expired verdict meanwhile');
  t.equal(await providerOfMail(m2!.mail_id), 'google_workspace');
  t.strictSame(await resolveQueued(), ['acme-corp.com'], 'one refresh for two sends');
  const row = (await pool.query(`SELECT provider, refresh_wanted, expires_at > now() AS fresh FROM recipient_domains WHERE domain = 'acme-corp.com'`)).rows[0];
  t.strictSame(row, { provider: 'google_workspace', refresh_wanted: false, fresh: true });
  await pool.query(`UPDATE recipient_domains SET expires_at = now() - interval '31 days' WHERE domain = 'nomx.net'`);
  t.equal(await purgeRecipientDomains(pool), 1);
  t.strictSame((await pool.query('SELECT domain FROM recipient_domains ORDER BY 1')).rows.map((r) => r.domain), ['acme-corp.com', 'contoso.com']);
});

t.test('the resolve job is registered with the worker', async (t) => {
  t.ok(JOBS.includes(providerMxJob));
  t.equal(providerMxJob.parse({ domain: 'x'.repeat(300) }), undefined, 'a malformed payload is refused');
});
