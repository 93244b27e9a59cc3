import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import t from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { projectRoot } from '../config/paths.js';
import { addDomain } from '../domain/domains/domains.js';
import { append } from '../domain/outbox/append.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { fanOutBatch } from '../domain/webhooks/fanout.js';
import { withTransaction } from '../sql/pool.js';
import { FANOUT_DEFAULTS } from '../workers/jobs/webhook-fanout.js';
import { rawCall } from './helpers/auth-matrix.js';
import { testDatabases } from './helpers/databases.js';
import { startTestPump } from './helpers/delivered.js';
import { makeTenant } from './helpers/fixtures.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * GET /v1/domains/{domain_name}/dmarc-reports and /dmarc-sources (issue 39; docs/dmarc.md,
 * Reading the reports) over HTTP on the real app and a real ClickHouse, whose dmarc_reports and
 * dmarc_records get fixture rows straight in, as the DMARC shipper writes them (a report shipped
 * twice included, with merges stopped so only FINAL can hide the copy). The expected figures are
 * worked out by hand from the fixtures below, not by a second copy of the SQL. Then the
 * domain.dmarc_report webhook event: a stored report and its outbox row, fanned out by the real
 * fan-out, and passed over by the event pump.
 */
const dbs = await testDatabases(t, 'dmarclistings');
const web = await startTestWeb(t, dbs, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
const ch = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => ch.close());

const a = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
const b = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
const DOMAIN = 'dmarc.example';
await addDomain(a.tenant, dbs.pool, DOMAIN);
await addDomain(a.tenant, dbs.pool, 'second.example');
// B has a domain of the same name (names are unique per instance) and one of its own.
await addDomain(b.tenant, dbs.pool, DOMAIN);
await addDomain(b.tenant, dbs.pool, 'only-b.example');

const DAY = 86_400_000;
const NY = 'America/New_York';
// Day 0: a UTC midnight 20 days ago, well inside the tables' 13-month TTL.
const D0 = new Date(Date.now() - 20 * DAY);
D0.setUTCHours(0, 0, 0, 0);
const at = (day: number, hh = 0, mm = 0) => new Date(D0.getTime() + day * DAY + (hh * 60 + mm) * 60_000);
const dateOf = (day: number) => new Date(D0.getTime() + day * DAY).toISOString().slice(0, 10);
/** 23:30 in New York on the local date `day`: already the next day in UTC. */
const nyEvening = (day: number) => DateTime.fromISO(`${dateOf(day)}T23:30:00`, { zone: NY }).toUTC().toJSDate();
const chSeconds = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
const chMillis = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');

interface Rec {
  ip: string;
  count: number;
  disposition: string;
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  from: string;
  signed: boolean;
}
interface Report {
  instance: number;
  domain: string;
  key: number;
  org: string;
  email: string | null;
  id: string;
  begin: Date;
  schema: 'rfc7489' | 'rfc9990';
  policy: { domain: string; p: string | null; sp: string | null; np: string | null; pct: number | null; adkim: string | null; aspf: string | null };
  authenticated: boolean;
  received: Date;
  records: Rec[];
}

const A = a.tenant.instanceId;
const policy7489 = { domain: DOMAIN, p: 'reject', sp: 'quarantine', np: null, pct: 100, adkim: 'r', aspf: 'r' };
const R1: Report = {
  instance: A, domain: DOMAIN, key: 101, org: 'google.com', email: 'noreply-dmarc-support@google.com', id: 'g-1', begin: at(1), schema: 'rfc7489',
  policy: policy7489, authenticated: true, received: at(2, 3, 15),
  records: [
    { ip: '203.0.113.5', count: 40, disposition: 'none', dkim: 'pass', spf: 'pass', from: DOMAIN, signed: true },
    { ip: '198.51.100.7', count: 3, disposition: 'reject', dkim: 'fail', spf: 'fail', from: DOMAIN, signed: false },
    { ip: '198.51.100.7', count: 2, disposition: 'quarantine', dkim: 'fail', spf: 'pass', from: `news.${DOMAIN}`, signed: false },
  ],
};
const R2: Report = {
  instance: A, domain: DOMAIN, key: 102, org: 'Yahoo', email: 'dmarchelp@yahooinc.com', id: 'y-1', begin: at(2), schema: 'rfc9990',
  policy: { domain: DOMAIN, p: 'none', sp: null, np: 'quarantine', pct: null, adkim: 's', aspf: 'r' }, authenticated: false, received: at(3, 1),
  records: [
    { ip: '203.0.113.5', count: 25, disposition: 'none', dkim: 'pass', spf: 'fail', from: DOMAIN, signed: true },
    { ip: '192.0.2.10', count: 5, disposition: 'reject', dkim: 'fail', spf: 'fail', from: DOMAIN, signed: false },
    { ip: '198.51.100.7', count: 4, disposition: 'none', dkim: 'fail', spf: 'pass', from: `news.${DOMAIN}`, signed: false },
  ],
};
// Begins on the local date 3 in New York, which is day 4 in UTC.
const R3: Report = {
  instance: A, domain: DOMAIN, key: 103, org: 'Outlook.com', email: null, id: 'o-1', begin: nyEvening(3), schema: 'rfc7489',
  policy: policy7489, authenticated: true, received: at(5, 8),
  records: [
    { ip: '192.0.2.10', count: 5, disposition: 'none', dkim: 'fail', spf: 'fail', from: DOMAIN, signed: false },
    // No disposition and no header_from in the report: counted in none of the three, header_from null.
    { ip: '192.0.2.9', count: 10, disposition: '', dkim: 'fail', spf: 'fail', from: '', signed: false },
    { ip: '203.0.113.5', count: 1, disposition: 'none', dkim: 'pass', spf: 'pass', from: DOMAIN, signed: true },
  ],
};
// Noise: A's other domain, and B's domain of the same name.
const OTHER_DOMAIN: Report = { ...R2, domain: 'second.example', key: 104, id: 'y-2', records: [{ ...R2.records[0]!, count: 7 }] };
const B_SAME_NAME: Report = {
  ...R2, instance: b.tenant.instanceId, key: 201, id: 'y-b',
  records: [{ ...R2.records[0]!, count: 1000 }, { ip: '10.9.9.9', count: 3, disposition: 'none', dkim: 'pass', spf: 'pass', from: DOMAIN, signed: false }],
};

function reportRow(r: Report, shippedAt: Date) {
  const messages = r.records.reduce((n, x) => n + x.count, 0);
  const passed = r.records.filter((x) => x.dkim === 'pass' || x.spf === 'pass').reduce((n, x) => n + x.count, 0);
  return {
    instance_id: r.instance, domain: r.domain, begin_at: chSeconds(r.begin), report_key: r.key, end_at: chSeconds(new Date(r.begin.getTime() + DAY - 1000)),
    org_name: r.org, org_email: r.email, report_id: r.id, schema: r.schema,
    policy_domain: r.policy.domain, policy_p: r.policy.p, policy_sp: r.policy.sp, policy_np: r.policy.np, policy_pct: r.policy.pct,
    policy_adkim: r.policy.adkim, policy_aspf: r.policy.aspf, policy_fo: null, policy_testing: null, policy_discovery: null, generator: null,
    message_count: messages, dmarc_pass_count: passed, dmarc_fail_count: messages - passed, record_count: r.records.length,
    reporter_authenticated: r.authenticated, received_at: chMillis(r.received), shipped_at: chMillis(shippedAt),
  };
}

function recordRows(r: Report, shippedAt: Date) {
  return r.records.map((x, i) => ({
    instance_id: r.instance, domain: r.domain, begin_at: chSeconds(r.begin), report_key: r.key, row_number: i,
    end_at: chSeconds(new Date(r.begin.getTime() + DAY - 1000)), org_name: r.org, source_ip: x.ip, count: x.count,
    disposition: x.disposition, dkim_aligned: x.dkim, spf_aligned: x.spf, header_from: x.from, envelope_from: null, envelope_to: null,
    reason_types: [], reason_comments: [], dkim_domains: x.signed ? [r.domain] : [], dkim_selectors: x.signed ? ['cartero1'] : [],
    dkim_results: x.signed ? ['pass'] : [], spf_domains: [], spf_scopes: [], spf_results: [], cartero_signed: x.signed, shipped_at: chMillis(shippedAt),
  }));
}

// Merges stopped first, so the copy of R1 (a report shipped twice) stays a second row on disk
// and only FINAL makes it one. In cluster mode (CARTERO_TEST_CLICKHOUSE_SHARDS=2) the rows are
// on the shards' local tables, and the inserts wait for the shards, as the shipper's do.
for (const url of dbs.cluster?.shardUrls ?? [dbs.clickhouseUrl]) {
  const node = createClickHouseClient(url);
  for (const table of ['dmarc_reports', 'dmarc_records']) await node.command({ query: `SYSTEM STOP MERGES ${dbs.cluster ? `${table}_local` : table}` });
  await node.close();
}
const foreground = { distributed_foreground_insert: 1 } as const;
for (const [reports, shipped] of [[[R1, R2, R3, OTHER_DOMAIN, B_SAME_NAME], at(6)], [[R1], at(7)]] as const) {
  await ch.insert({ table: 'dmarc_reports', format: 'JSONEachRow', values: reports.map((r) => reportRow(r, shipped)), clickhouse_settings: foreground });
  await ch.insert({ table: 'dmarc_records', format: 'JSONEachRow', values: reports.flatMap((r) => recordRows(r, shipped)), clickhouse_settings: foreground });
}
t.equal(Number((await (await ch.query({ query: `SELECT count() AS n FROM dmarc_records WHERE report_key = 101`, format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n), 6, 'the copy of R1 is on disk, unmerged');

const qs = (q: Record<string, string | number>) => {
  const s = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
  return s ? `?${s}` : '';
};
const get = (path: string, headers = a.headers) => rawCall(web.url + path, headers);
async function list(kind: 'reports' | 'sources', q: Record<string, string | number> = {}, headers = a.headers, domain = DOMAIN) {
  const r = await get(`/v1/domains/${encodeURIComponent(domain)}/dmarc-${kind}${qs(q)}`, headers);
  if (r.status !== 200) throw new Error(`dmarc-${kind}: ${r.status} ${r.text}`);
  return r.body as { data: any[]; pagination: { page: number; page_size: number; has_more: boolean; total_items: number | null; total_pages: number | null } };
}

const item = (r: Report, message_count: number, dmarc_pass_count: number) => ({
  id: r.key,
  org_name: r.org,
  org_email: r.email,
  report_id: r.id,
  begin_at: r.begin.toISOString(),
  end_at: new Date(r.begin.getTime() + DAY - 1000).toISOString(),
  schema: r.schema,
  policy: r.policy,
  message_count,
  dmarc_pass_count,
  dmarc_fail_count: message_count - dmarc_pass_count,
  reporter_authenticated: r.authenticated,
  received_at: r.received.toISOString(),
});
// Worked out by hand from the records above.
const ITEM1 = item(R1, 45, 42);
const ITEM2 = item(R2, 34, 29);
const ITEM3 = item(R3, 16, 1);

const SRC_MAIN = {
  source_ip: '203.0.113.5', message_count: 66, dmarc_pass_count: 66, dkim_aligned_pass_count: 66, spf_aligned_pass_count: 41,
  dispositions: { none: 66, quarantine: 0, reject: 0 }, header_from: DOMAIN, reporters: ['Outlook.com', 'Yahoo', 'google.com'], cartero_signed_count: 66,
};
const SRC_10 = {
  source_ip: '192.0.2.10', message_count: 10, dmarc_pass_count: 0, dkim_aligned_pass_count: 0, spf_aligned_pass_count: 0,
  dispositions: { none: 5, quarantine: 0, reject: 5 }, header_from: DOMAIN, reporters: ['Outlook.com', 'Yahoo'], cartero_signed_count: 0,
};
const SRC_9 = {
  source_ip: '192.0.2.9', message_count: 10, dmarc_pass_count: 0, dkim_aligned_pass_count: 0, spf_aligned_pass_count: 0,
  dispositions: { none: 0, quarantine: 0, reject: 0 }, header_from: null, reporters: ['Outlook.com'], cartero_signed_count: 0,
};
// Its busiest From is news.dmarc.example (6 messages against 3).
const SRC_198 = {
  source_ip: '198.51.100.7', message_count: 9, dmarc_pass_count: 6, dkim_aligned_pass_count: 0, spf_aligned_pass_count: 6,
  dispositions: { none: 4, quarantine: 2, reject: 3 }, header_from: `news.${DOMAIN}`, reporters: ['Yahoo', 'google.com'], cartero_signed_count: 0,
};

t.test('dmarc-reports: every report once, newest period first, its figures and policy', async (t) => {
  const all = await list('reports');
  t.strictSame(all.data, [ITEM3, ITEM2, ITEM1]);
  t.strictSame(all.pagination, { page: 1, page_size: 20, has_more: false, total_items: 3, total_pages: 1 });
});

t.test('dmarc-sources: one row per address, busiest first, ties by address as text', async (t) => {
  const all = await list('sources');
  // 192.0.2.10 and 192.0.2.9 tie at 10: "192.0.2.10" sorts first as text.
  t.strictSame(all.data, [SRC_MAIN, SRC_10, SRC_9, SRC_198]);
  t.strictSame(all.pagination, { page: 1, page_size: 20, has_more: false, total_items: 4, total_pages: 1 });
});

t.test('dates select reports by the beginning of their period, in tz', async (t) => {
  t.strictSame((await list('reports', { start_date: dateOf(2), end_date: dateOf(2) })).data, [ITEM2]);
  t.strictSame((await list('reports', { start_date: dateOf(2) })).data, [ITEM3, ITEM2], 'open end');
  t.strictSame((await list('reports', { end_date: dateOf(2) })).data, [ITEM2, ITEM1], 'open start');
  t.strictSame((await list('reports', { start_date: dateOf(3), end_date: dateOf(3), tz: NY })).data, [ITEM3], 'local date 3 in New York');
  t.strictSame((await list('reports', { start_date: dateOf(3), end_date: dateOf(3), tz: 'UTC' })).data, [], 'not on date 3 in UTC');
  t.strictSame((await list('reports', { start_date: dateOf(4), end_date: dateOf(4) })).data, [ITEM3], 'date 4 in UTC (the instance has no zone)');
  const day1 = await list('sources', { start_date: dateOf(1), end_date: dateOf(1) });
  t.strictSame(day1.data, [
    { ...SRC_MAIN, message_count: 40, dmarc_pass_count: 40, dkim_aligned_pass_count: 40, spf_aligned_pass_count: 40, dispositions: { none: 40, quarantine: 0, reject: 0 }, reporters: ['google.com'], cartero_signed_count: 40 },
    // Within day 1, 3 messages from dmarc.example and 2 from news.: the busiest From is dmarc.example.
    { ...SRC_198, message_count: 5, dmarc_pass_count: 2, spf_aligned_pass_count: 2, dispositions: { none: 0, quarantine: 2, reject: 3 }, header_from: DOMAIN, reporters: ['google.com'] },
  ]);
  t.equal(day1.pagination.total_items, 2);
  const none = await list('sources', { start_date: dateOf(10), end_date: dateOf(11) });
  t.strictSame(none, { data: [], pagination: { page: 1, page_size: 20, has_more: false, total_items: 0, total_pages: 0 } });
});

t.test('pagination as the other listings: page, page_size, has_more, totals', async (t) => {
  const seen: any[] = [];
  for (let page = 1; page <= 4; page++) {
    const p = await list('sources', { page, page_size: 1 });
    t.strictSame(p.pagination, { page, page_size: 1, has_more: page < 4, total_items: 4, total_pages: 4 }, `sources page ${page}`);
    seen.push(...p.data);
  }
  t.strictSame(seen, [SRC_MAIN, SRC_10, SRC_9, SRC_198], 'the pages are the whole list, in order, without overlap');
  const past = await list('sources', { page: 5, page_size: 1 });
  t.strictSame(past, { data: [], pagination: { page: 5, page_size: 1, has_more: false, total_items: 4, total_pages: 4 } }, 'past the end');
  const r1 = await list('reports', { page: 1, page_size: 2 });
  t.strictSame(r1, { data: [ITEM3, ITEM2], pagination: { page: 1, page_size: 2, has_more: true, total_items: 3, total_pages: 2 } });
  const r2 = await list('reports', { page: 2, page_size: 2 });
  t.strictSame(r2, { data: [ITEM1], pagination: { page: 2, page_size: 2, has_more: false, total_items: 3, total_pages: 2 } });
});

t.test("each instance reads its own domain's reports; another's domain is 404 domain_not_found", async (t) => {
  const bReports = await list('reports', {}, b.headers);
  t.strictSame(bReports.data.map((r) => r.id), [201], "B's dmarc.example is B's");
  t.strictSame((await list('sources', {}, b.headers)).data.map((s) => [s.source_ip, s.message_count]), [['203.0.113.5', 1000], ['10.9.9.9', 3]]);
  t.strictSame((await list('sources', {}, a.headers, 'second.example')).data.map((s) => [s.source_ip, s.message_count]), [['203.0.113.5', 7]]);
  t.strictSame((await list('reports', {}, a.headers, 'DMARC.Example.')).data.map((r) => r.id), [103, 102, 101], 'the name compares as the status route does');
  for (const kind of ['reports', 'sources']) {
    for (const domain of ['only-b.example', 'nowhere.example']) {
      const r = await get(`/v1/domains/${domain}/dmarc-${kind}`);
      t.equal(r.status, 404, `${kind} ${domain}`);
      t.equal(r.body.code, 'domain_not_found');
      t.notMatch(r.text, /203\.0\.113|10\.9\.9\.9/, 'no data of it');
    }
  }
});

t.test('domains:read is needed: 403 without it, 401 without a key', async (t) => {
  const other = await createApiKey(dbs.pool, { instanceSlug: a.slug, scopes: ['senders:read', 'mail:read'] });
  const headers = { authorization: `Bearer ${other.key}`, 'x-instance-slug': a.slug };
  for (const kind of ['reports', 'sources']) {
    const forbidden = await get(`/v1/domains/${DOMAIN}/dmarc-${kind}`, headers);
    t.equal(forbidden.status, 403, kind);
    t.equal(forbidden.body.code, 'forbidden');
    const anonymous = await get(`/v1/domains/${DOMAIN}/dmarc-${kind}`, {});
    t.equal(anonymous.status, 401);
    t.equal(anonymous.headers['www-authenticate'], 'Bearer');
  }
});

t.test('bad input is a 4xx problem, never a 500', async (t) => {
  const cases: Array<[Record<string, string | number> | string, number, string]> = [
    [{ start_date: '2026-13-01' }, 422, 'validation_error'],
    [{ end_date: '2026-02-30' }, 422, 'validation_error'],
    [{ start_date: 'yesterday' }, 422, 'validation_error'],
    [{ start_date: dateOf(3), end_date: dateOf(1) }, 422, 'validation_error'],
    [{ tz: 'Mars/Olympus_Mons' }, 422, 'validation_error'],
    [{ page: 0 }, 422, 'validation_error'],
    [{ page_size: 101 }, 422, 'validation_error'],
    [{ page: 'two' }, 422, 'validation_error'],
    [`?start_date=${dateOf(1)}&start_date=${dateOf(2)}`, 400, 'bad_request'],
  ];
  for (const kind of ['reports', 'sources']) {
    for (const [q, status, code] of cases) {
      const r = await get(`/v1/domains/${DOMAIN}/dmarc-${kind}${typeof q === 'string' ? q : qs(q)}`);
      t.equal(r.status, status, `${kind} ${JSON.stringify(q)}`);
      t.equal(r.body?.code, code);
      t.equal(r.headers['content-type']?.split(';')[0], 'application/problem+json');
    }
  }
  const tooLong = await get(`/v1/domains/${'a'.repeat(254)}/dmarc-sources`);
  t.equal(tooLong.status, 422, 'a domain name longer than 253');
});

t.test('the OpenAPI document lists both routes and the webhook event', async (t) => {
  const doc = (await rawCall(`${web.url}/v1/openapi.json`)).body;
  for (const kind of ['reports', 'sources']) {
    const op = doc.paths[`/v1/domains/{domain_name}/dmarc-${kind}`]?.get;
    t.ok(op, kind);
    t.same(op.parameters.map((p: any) => p.name).sort(), ['domain_name', 'end_date', 'page', 'page_size', 'start_date', 'tz']);
    t.ok(op.responses['404'], '404 documented');
  }
  t.same(Object.keys(doc.webhooks['domain.dmarc_report'].post.requestBody.content['application/json'].schema.properties.data.properties),
    ['domain', 'report_id', 'org_name', 'message_count', 'dmarc_fail_count']);
});

t.test('domain.dmarc_report: the event of a stored report, its data, and the pump passes it over', async (t) => {
  const hooks = await createApiKey(dbs.pool, { instanceSlug: a.slug, scopes: ['webhooks:write', 'webhooks:read'] });
  const hookHeaders = { authorization: `Bearer ${hooks.key}`, 'x-instance-slug': a.slug };
  const createHook = async (name: string, events: string[]) => {
    const r = await rawCall(`${web.url}/v1/webhooks`, hookHeaders, { method: 'POST', body: { name, url: `http://127.0.0.1:9/${name}`, events } });
    t.equal(r.status, 201, `webhook ${name}`);
    return r.body.id as number;
  };
  const wanted = await createHook('dmarc', ['domain.dmarc_report']);
  const unrelated = await createHook('mail', ['mail.sent']);

  const domainId = Number((await dbs.pool.query('SELECT id FROM domains WHERE instance_id = $1 AND name = $2', [A, DOMAIN])).rows[0].id);
  /** What the store does: the report's row and its event, in one transaction. */
  const store = (r: Report) =>
    withTransaction(dbs.pool, async (c) => {
      const messages = r.records.reduce((n, x) => n + x.count, 0);
      const passed = r.records.filter((x) => x.dkim === 'pass' || x.spf === 'pass').reduce((n, x) => n + x.count, 0);
      const { rows } = await c.query(
        `INSERT INTO dmarc_reports (instance_id, domain_id, org_name, org_email, report_id, begin_at, end_at, schema, policy, message_count,
                                    dmarc_pass_count, record_count, reporter_authenticated, records)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
        [A, domainId, r.org, r.email, r.id, r.begin, new Date(r.begin.getTime() + DAY - 1000), r.schema, JSON.stringify({ ...r.policy, fo: null, testing: null, discoveryMethod: null }),
          messages, passed, r.records.length, r.authenticated, JSON.stringify(r.records)],
      );
      const id = Number(rows[0].id);
      const [eventId] = await append(a.tenant, c, { kind: 'domain.dmarc_report', entityId: id });
      return { id, eventId: eventId! };
    });
  const kept = await store(R1);
  const gone = await store({ ...R2, id: 'y-gone' });
  await dbs.pool.query('DELETE FROM dmarc_reports WHERE id = $1', [gone.id]);

  let marked = 0;
  while (true) {
    const done = await withTransaction(dbs.pool, (c) => fanOutBatch(c, FANOUT_DEFAULTS, async () => {}));
    if (!done || done.marked === 0) break;
    marked += done.marked;
  }
  t.ok(marked >= 2, 'the fan-out took the events');
  const body = async (eventId: string) => {
    const { rows } = await dbs.pool.query('SELECT type, body FROM webhook_events WHERE id = $1', [eventId]);
    t.equal(rows.length, 1, `event ${eventId} frozen`);
    return { type: rows[0].type, ...JSON.parse(rows[0].body) };
  };
  const e = await body(kept.eventId);
  t.equal(e.type, 'domain.dmarc_report');
  t.strictSame(e.data, { domain: DOMAIN, report_id: 'g-1', org_name: 'google.com', message_count: 45, dmarc_fail_count: 3 }, 'the data, whole');
  t.strictSame((await body(gone.eventId)).data, { domain: null, report_id: null, org_name: null, message_count: null, dmarc_fail_count: null },
    'a report gone before the fan-out: nulls');
  const deliveries = (await dbs.pool.query('SELECT webhook_id::int AS w FROM webhook_deliveries WHERE event_id = $1', [kept.eventId])).rows;
  t.strictSame(deliveries, [{ w: wanted }], 'one delivery, to the webhook subscribed to it');
  t.not(wanted, unrelated);

  // The event pump: an entity's row has no mail to ship; it is marked done, nothing reaches mail_events.
  const pump = startTestPump(t, dbs);
  await waitFor('the pump to pass the events over', async () => {
    const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM event_outbox WHERE id = ANY($1::bigint[]) AND stage = 2', [[kept.eventId, gone.eventId]]);
    return rows[0].n === 2 ? true : undefined;
  });
  await pump.stop();
  const shipped = await (await ch.query({ query: 'SELECT count() AS n FROM mail_events WHERE event_id IN ({ids:Array(UInt64)})', query_params: { ids: [kept.eventId, gone.eventId] }, format: 'JSONEachRow' })).json<{ n: string }>();
  t.equal(Number(shipped[0]!.n), 0, 'not a mail event');
});

t.test("docs/analytics.md's DMARC example queries run, and agree with the sources listing", async (t) => {
  const doc = readFileSync(join(projectRoot, 'docs/analytics.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## DMARC reports'), doc.indexOf('## Cluster mode'));
  const queries = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  t.equal(queries.length, 2);
  const run = async (sql: string) => {
    const mine = sql
      .replace('instance_id = 42', `instance_id = ${A}`)
      .replace(`domain = 'example.com'`, `domain = '${DOMAIN}'`)
      .replace(`'2026-11-01 00:00:00'`, `'${chSeconds(at(0))}'`)
      .replace(`'2026-12-01 00:00:00'`, `'${chSeconds(at(10))}'`);
    return (await ch.query({ query: mine, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } })).json<any>();
  };
  const perSource = await run(queries[0]!);
  t.strictSame(perSource.map((r) => [r.source_ip, r.messages, r.dmarc_pass, r.signed_by_cartero]),
    [SRC_MAIN, SRC_10, SRC_9, SRC_198].map((s) => [s.source_ip, s.message_count, s.dmarc_pass_count, s.cartero_signed_count]));
  const daily = await run(queries[1]!);
  t.strictSame(daily.map((r) => [r.day, r.messages, r.failed]), [[dateOf(1), 45, 3], [dateOf(2), 34, 5], [dateOf(4), 16, 15]]);
});
