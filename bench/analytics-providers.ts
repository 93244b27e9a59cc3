import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { clickHouseFetch } from '../analytics/client.js';
import { ACTIVITY_SETTINGS } from '../analytics/activities/query.js';
import { eventCountsQuery, keptCountsQuery, mailCountsQuery, sumByKeys, type CountKey, type CountsFilter } from '../analytics/deliverability/counts.js';
import { bySource, staleBucketsQuery } from '../analytics/deliverability/buckets.js';
import { dashboardRange } from '../domain/panel/dashboard-range.js';
import { createSender } from '../domain/senders/senders.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import type { Tenant } from '../domain/tenancy/context.js';
import type { Pool } from '../sql/pool.js';
import { benchTenant, verifiedDomain } from './fixtures.js';
import { intEnv, latencyStats, round, sleep, timedRuns } from './proc.js';

/**
 * bench/analytics's providers part (issue 40): GET /v1/deliverability/providers and
 * /providers/{provider}/daily over a mirror of BENCH_PROVIDER_MAILS (default 10 M) mails.
 *
 * Its own instance (`bench-providers`), so the activity listings' data and figures stay as they
 * were: 10 M mails of 10,000 messages (1,000 recipients each) received over the 28 days after
 * the fixture's first day, from 3 sending domains (60 / 30 / 10 % of the messages, 2 senders
 * each). Each mail's recipient and provider by PROVIDERS below (gmail 40 %, microsoft 15 %,
 * yahoo 10 %, google_workspace 10 %, apple 5 %, microsoft_365 5 %, ten smaller ones 8 %, other
 * 7 %); its fate by its provider: hard bounces 0.8-3 %, soft 0.6 %, deferred 0.4 %, the rest
 * delivered. The mirror holds each mail's snapshots as the pump ships them: a first one for every
 * mail (queued for those that end bounced or deferred, else sent), then a newer `version` for
 * every mail whose state moved after (bounced, deferred, opened: ~31 % of the mails), so FINAL
 * has real copies to merge (background merges are then left to settle, as for the listings).
 * Events: 28 % of the delivered mails opened 1-3 times (70 % of Apple's opens flagged
 * privacy_proxy, 6 % of the others'), complaints per provider (none at Gmail, Google Workspace and
 * Apple, which send no per-message reports; 0.15 % Yahoo, 0.35 % Comcast, ...), unsubscribes
 * 0.25 %; 0.5 % of the mails' first open shipped twice (the second copy 1 s later, its machine
 * flag set), as a re-shipped batch leaves them. No status or click events: the queries read the
 * key ranges of complaint, unsubscribe and open only, so those would add disk, not reads.
 */

export const PROVIDER_MAILS = intEnv('BENCH_PROVIDER_MAILS', 10_000_000);
const PER_MESSAGE = 1_000;
const CHUNK = 1_000_000;
const ITERATIONS = intEnv('BENCH_ITERATIONS', 20);
const CELL_BUDGET_S = intEnv('BENCH_CELL_BUDGET_S', 8);
/** Old-vs-new direct runs per cell and query (alternated). */
const COMPARE_RUNS = intEnv('BENCH_PROVIDER_COMPARE_RUNS', 5);
const MIN_RUNS = 3;
const WARMUPS = 2;
const MERGE_WAIT_MS = 240_000;
const KEPT_WAIT_MS = 600_000;
const TARGET_P95_MS = 150;
const SLUG = 'bench-providers';
const DOMAINS = ['news.bench-shop.example.com', 'mail.bench-shop.example.com', 'billing.bench-shop.example.com'];

/**
 * [id, share in ‰, recipient domain (`#` = one of 500 company domains), hard bounces per 10,000,
 * complaints per 10,000 delivered, machine-flagged opens in %].
 */
const PROVIDERS: Array<[string, number, string, number, number, number]> = [
  ['gmail', 400, 'gmail.com', 80, 0, 6],
  ['microsoft', 150, 'outlook.com', 150, 8, 6],
  ['yahoo', 100, 'yahoo.com', 120, 15, 6],
  ['google_workspace', 100, 'corp#.example', 100, 0, 6],
  ['apple', 50, 'icloud.com', 90, 0, 70],
  ['microsoft_365', 50, 'biz#.example', 100, 4, 6],
  ['gmx', 20, 'gmx.de', 100, 5, 6],
  ['comcast', 10, 'comcast.net', 100, 35, 6],
  ['orange', 10, 'orange.fr', 100, 3, 6],
  ['t_online', 10, 't-online.de', 100, 3, 6],
  ['proton', 10, 'proton.me', 100, 3, 6],
  ['yandex', 5, 'yandex.ru', 100, 3, 6],
  ['mailru', 5, 'mail.ru', 100, 3, 6],
  ['zoho', 5, 'zoho.com', 100, 3, 6],
  ['qq', 5, 'qq.com', 100, 3, 6],
  ['other', 70, 'site#.example', 300, 6, 6],
];
const SOFT_PER_10K = 60;
const DEFERRED_PER_10K = 40;
const OPENED_PCT = 28;
const UNSUB_PER_10K = 25;

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const fmt = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '—' : round(n, digits).toLocaleString('en-US'));
const day = (d: Date) => d.toISOString().slice(0, 10);
const chTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);
const arr = (xs: readonly (string | number)[]) => `[${xs.map((x) => (typeof x === 'number' ? String(x) : `'${x}'`)).join(',')}]`;

export interface ClickHouseHttp {
  root: string;
  database: string;
}

async function chText(ch: ClickHouseHttp, sql: string, params: Record<string, string | number> = {}, settings: Record<string, string | number> = {}): Promise<string> {
  const u = new URL(ch.root);
  u.searchParams.set('database', ch.database);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(`param_${k}`, String(v));
  for (const [k, v] of Object.entries(settings)) u.searchParams.set(k, String(v));
  const res = await clickHouseFetch(u.toString(), { method: 'POST', body: sql });
  const body = await res.text();
  if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${body.slice(0, 2000)}\nquery: ${sql.slice(0, 500)}`);
  return body;
}
async function chRows<T>(ch: ClickHouseHttp, sql: string, params: Record<string, string | number> = {}): Promise<T[]> {
  return (await chText(ch, `${sql}\nFORMAT JSONEachRow`, params)).split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);
}

export interface ProvidersFixture {
  tenant: Tenant;
  key: string;
  senders: Array<{ id: number; email: string }>;
  from: Date;
  to: Date;
}

export async function seedProviders(pool: Pool, from: Date, to: Date): Promise<ProvidersFixture> {
  const tenant = await benchTenant(pool, SLUG, 'Providers benchmark');
  const senders: ProvidersFixture['senders'] = [];
  for (const domain of DOMAINS) {
    await verifiedDomain(tenant, pool, domain);
    for (const name of ['news', 'hello']) {
      const s = await createSender(tenant, pool, { email: `${name}@${domain}`, name: `Shop ${name}` });
      senders.push({ id: Number(s.id), email: s.email_address });
    }
  }
  const key = await createApiKey(pool, { instanceSlug: SLUG, scopes: ['mail:read'] });
  return { tenant, key: key.key, senders, from, to };
}

/** One row per mail, with its fate: the source of the mirror's snapshots and of the events. */
function mailsGenerator(fx: ProvidersFixture, chunk: { start: number; length: number }): string {
  const messages = Math.max(1, Math.ceil(PROVIDER_MAILS / PER_MESSAGE));
  const stepMs = Math.floor(((Math.round((fx.to.getTime() - fx.from.getTime()) / 86_400_000) - 2) * 86_400_000) / messages);
  const perMailMs = Math.max(1, Math.floor(Math.min(stepMs, 3_600_000) / PER_MESSAGE));
  let cum = 0;
  const bounds = PROVIDERS.map((p) => (cum += p[1]));
  const ids = PROVIDERS.map((p) => p[0]);
  const providerSql = `multiIf(${PROVIDERS.slice(0, -1).map((p, i) => `ph < ${bounds[i]}, '${p[0]}'`).join(', ')}, 'other')`;
  const perProvider = (col: number) => `transform(provider, ${arr(ids)}, ${arr(PROVIDERS.map((p) => p[col] as number))}, 0)`;
  const domainSql = `replaceOne(transform(provider, ${arr(ids)}, ${arr(PROVIDERS.map((p) => p[2]))}, 'site#.example'), '#', toString(n % 500))`;
  // Messages from the 3 domains: 6, 3 and 1 of every 10; 2 senders each.
  return `(
  SELECT n, mail_id, msg_id, provider, recipient, sender_id, sender, subject, custom_msg_id, custom_group_code, received, sent_at,
         status, bounce_class, opens_n, human_opens_n, complained, unsubscribed, machine_pct
    FROM (
      SELECT number AS n, intDiv(n, ${PER_MESSAGE}) AS msg_n,
             concat('01JBPM', leftPad(toString(n), 20, '0')) AS mail_id,
             concat('01JBPG', leftPad(toString(msg_n), 20, '0')) AS msg_id,
             cityHash64(n, 11) % 1000 AS ph,
             ${providerSql} AS provider,
             concat('r', toString(n), '@', ${domainSql}) AS recipient,
             multiIf(msg_n % 10 < 6, 0, msg_n % 10 < 9, 1, 2) * 2 + msg_n % 2 AS sender_i,
             CAST(arrayElement({senderIds:Array(UInt64)}, sender_i + 1) AS Nullable(UInt64)) AS sender_id,
             CAST(arrayElement({senderEmails:Array(String)}, sender_i + 1) AS Nullable(String)) AS sender,
             concat('Offer #', toString(msg_n)) AS subject,
             CAST(NULL AS Nullable(String)) AS custom_msg_id,
             CAST(concat('campaign-', leftPad(toString(msg_n % 20), 2, '0')) AS Nullable(String)) AS custom_group_code,
             toDateTime64({from:String}, 3, 'UTC') + toIntervalMillisecond(msg_n * ${stepMs} + (n % ${PER_MESSAGE}) * ${perMailMs}) AS received,
             CAST(received + toIntervalSecond(20) AS Nullable(DateTime64(3, 'UTC'))) AS sent_at,
             cityHash64(n, 12) % 10000 AS fate,
             ${perProvider(3)} AS hard_per_10k,
             multiIf(fate < hard_per_10k + ${SOFT_PER_10K}, 6, fate < hard_per_10k + ${SOFT_PER_10K + DEFERRED_PER_10K}, 5, 3) AS status,
             if(status = 6, if(fate < hard_per_10k, 'hard', 'soft'), '') AS bounce_class,
             ${perProvider(5)} AS machine_pct,
             if(status = 3 AND cityHash64(n, 13) % 100 < ${OPENED_PCT}, 1 + cityHash64(n, 14) % 3, 0) AS opens_n,
             arrayCount(k -> cityHash64(n, 17, k) % 100 >= machine_pct, range(opens_n)) AS human_opens_n,
             status = 3 AND cityHash64(n, 15) % 10000 < ${perProvider(4)} AS complained,
             status = 3 AND cityHash64(n, 16) % 10000 < ${UNSUB_PER_10K} AS unsubscribed
        FROM numbers(${chunk.start}, ${chunk.length})
    )
)`;
}

const MIRROR_COLUMNS = 'instance_id, received_at, mail_id, msg_id, recipient, provider, subject, sender_id, sender, status, bounce_class, opens, clicks, human_opens, human_clicks, queued_at, sent_at, delay, custom_msg_id, custom_group_code, version';
const EVENT_COLUMNS = 'instance_id, event_type, status, occurred_at, event_id, mail_id, msg_id, recipient, provider, sender_id, sender, subject, custom_msg_id, custom_group_code, mail_received_at, sent_at, url, user_agent, ip, machine, shipped_at';

export interface ProvidersLoad {
  mails: number;
  /** Snapshots inserted: one per mail, and a newer one per mail that moved. */
  mirror_rows: number;
  mirror_rows_after_merges: number;
  events: Record<string, number>;
  mirror_s: number;
  events_s: number;
  merges_wait_s: number;
  /** Seconds from the end of the load until the worker had counted every bucket (kept counts). */
  kept_s: number;
  kept_rows: number;
  parts_active: Record<string, number>;
}

export async function loadProviders(ch: ClickHouseHttp, fx: ProvidersFixture): Promise<ProvidersLoad> {
  const params = {
    senderIds: arr(fx.senders.map((s) => s.id)),
    senderEmails: arr(fx.senders.map((s) => s.email)),
    from: chTime(fx.from),
  };
  const settings = { max_insert_threads: 2, max_execution_time: 1800, distributed_foreground_insert: 1 };
  // By chunks of mails: one INSERT of 10 M on a busy machine outlasts fetch's 300 s wait for the answer's headers.
  const chunks: Array<{ start: number; length: number }> = [];
  for (let start = 0; start < PROVIDER_MAILS; start += CHUNK) chunks.push({ start, length: Math.min(CHUNK, PROVIDER_MAILS - start) });
  const insert = async (sql: (gen: string) => string) => {
    for (const chunk of chunks) await chText(ch, sql(mailsGenerator(fx, chunk)), params, settings);
  };
  const i = fx.tenant.instanceId;
  const v0 = `toUInt64(toUnixTimestamp64Micro(received))`;
  let t = performance.now();
  // First snapshot of every mail: queued if it will bounce or be deferred, else sent, nothing opened yet.
  await insert((gen) => `INSERT INTO mails (${MIRROR_COLUMNS})
    SELECT ${i}, received, mail_id, msg_id, recipient, provider, subject, sender_id, sender, if(status IN (5, 6), 2, 3), '', 0, 0, NULL, NULL,
           received + toIntervalSecond(1), if(status IN (5, 6), NULL, sent_at), if(status IN (5, 6), NULL, 20), custom_msg_id, custom_group_code, ${v0}
      FROM ${gen}`);
  // The newer snapshot of every mail that moved after: bounced, deferred, opened.
  await insert((gen) => `INSERT INTO mails (${MIRROR_COLUMNS})
    SELECT ${i}, received, mail_id, msg_id, recipient, provider, subject, sender_id, sender, status, bounce_class, opens_n, 0, human_opens_n, 0,
           received + toIntervalSecond(1), if(status = 3, sent_at, NULL), 20, custom_msg_id, custom_group_code, ${v0} + 3600000000
      FROM ${gen} WHERE status != 3 OR opens_n > 0`);
  const mirrorS = (performance.now() - t) / 1000;
  log(`providers: mirror of ${fmt(PROVIDER_MAILS)} mails (2 snapshots for the mails that moved) in ${mirrorS.toFixed(1)} s`);

  t = performance.now();
  const common = `mail_id, msg_id, recipient, provider, sender_id, sender, subject, custom_msg_id, custom_group_code, received, sent_at`;
  const ua = `'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148'`;
  const eventBase = 5_000_000_000;
  // Opens: event k of mail n (k < 3), 1 minute to 2 days after reception; a machine flag by provider.
  await insert((gen) => `INSERT INTO mail_events (${EVENT_COLUMNS})
    SELECT ${i}, 'open', NULL, received + toIntervalMillisecond(60000 + cityHash64(n, 18, k) % 172680000), ${eventBase} + n * 8 + k, ${common},
           NULL, ${ua}, IPv4NumToString(toUInt32(cityHash64(n, 5) % 4294967295)),
           if(cityHash64(n, 17, k) % 100 >= machine_pct, '', 'privacy_proxy'), now64(3, 'UTC')
      FROM ${gen} ARRAY JOIN range(opens_n) AS k WHERE opens_n > 0`);
  // 0.5 % of the first opens shipped again a second later, the new copy flagged machine-made.
  await insert((gen) => `INSERT INTO mail_events (${EVENT_COLUMNS})
    SELECT ${i}, 'open', NULL, received + toIntervalMillisecond(60000 + cityHash64(n, 18, 0) % 172680000), ${eventBase} + n * 8, ${common},
           NULL, ${ua}, IPv4NumToString(toUInt32(cityHash64(n, 5) % 4294967295)), 'privacy_proxy', now64(3, 'UTC') + toIntervalSecond(1)
      FROM ${gen} WHERE opens_n > 0 AND cityHash64(n, 19) % 200 = 0`);
  // Complaints and unsubscribes, 1 hour to 2 days after reception.
  for (const [type, flag, k] of [['complaint', 'complained', 4], ['unsubscribe', 'unsubscribed', 5]] as const) {
    await insert((gen) => `INSERT INTO mail_events (${EVENT_COLUMNS})
      SELECT ${i}, '${type}', NULL, received + toIntervalMillisecond(3600000 + cityHash64(n, 20 + ${k}) % 169200000), ${eventBase} + n * 8 + ${k}, ${common},
             NULL, '', '', '', now64(3, 'UTC')
        FROM ${gen} WHERE ${flag}`);
  }
  const eventsS = (performance.now() - t) / 1000;
  log(`providers: events in ${eventsS.toFixed(1)} s`);
  const loaded = performance.now();

  t = performance.now();
  for (let idle = 0; idle < 3 && performance.now() - t < MERGE_WAIT_MS; ) {
    await sleep(2_000);
    const [m] = await chRows<{ n: string }>(ch, 'SELECT count() AS n FROM system.merges WHERE database = currentDatabase()');
    idle = Number(m?.n) === 0 ? idle + 1 : 0;
  }
  const mergesS = (performance.now() - t) / 1000;
  // The kept counts: the worker's minute job counts every bucket once it has been quiet for a
  // minute (analytics/deliverability/rollup.ts). Waited for, as a deployment has them.
  // The request path's own check (analytics/deliverability/buckets.ts) over the data's whole range.
  const stale = staleBucketsQuery(fx.tenant, { from: fx.from, to: fx.to });
  while ((await chRows(ch, stale.sql, stale.params as Record<string, string | number>)).length > 0 && performance.now() - loaded <= KEPT_WAIT_MS) await sleep(2_000);
  const keptS = (performance.now() - loaded) / 1000;
  const [keptRows] = await chRows<{ n: string; pairs: string }>(ch, 'SELECT count() AS n, sum(length(provider)) AS pairs FROM provider_counts FINAL WHERE instance_id = {i:UInt64}', { i: fx.tenant.instanceId });
  log(`providers: kept counts ready ${keptS.toFixed(1)} s after the load (${keptRows!.n} bucket rows, ${keptRows!.pairs} provider/domain entries)`);
  const q = { i };
  const [mails] = await chRows<{ n: string }>(ch, 'SELECT count() AS n FROM mails FINAL WHERE instance_id = {i:UInt64}', q);
  const [rows] = await chRows<{ n: string }>(ch, 'SELECT count() AS n FROM mails WHERE instance_id = {i:UInt64}', q);
  const [moved] = await chRows<{ n: string }>(ch, 'SELECT count() AS n FROM mails FINAL WHERE instance_id = {i:UInt64} AND (status != 3 OR opens > 0)', q);
  const events = await chRows<{ t: string; n: string }>(ch, 'SELECT event_type AS t, count() AS n FROM mail_events WHERE instance_id = {i:UInt64} GROUP BY t', q);
  const parts = await chRows<{ table: string; n: string }>(
    ch,
    `SELECT replaceRegexpOne(table, '_local$', '') AS table, count() AS n FROM system.parts
      WHERE database = currentDatabase() AND active AND replaceRegexpOne(table, '_local$', '') IN ('mails', 'mail_events') GROUP BY table`,
  );
  return {
    mails: Number(mails!.n),
    mirror_rows: Number(mails!.n) + Number(moved!.n),
    mirror_rows_after_merges: Number(rows!.n),
    events: Object.fromEntries(events.map((r) => [r.t, Number(r.n)])),
    mirror_s: round(mirrorS, 1),
    events_s: round(eventsS, 1),
    merges_wait_s: round(mergesS, 1),
    kept_s: round(keptS, 1),
    kept_rows: Number(keptRows!.n),
    parts_active: Object.fromEntries(parts.map((r) => [r.table, Number(r.n)])),
  };
}

// ---------------------------------------------------------------- cells

interface ProviderCellSpec {
  path: 'providers' | 'daily';
  provider?: string;
  range: 'default' | '30 days';
  domain?: string;
}

/** What ClickHouse reports of a query (X-ClickHouse-Summary, with wait_end_of_query): the embedded server keeps no query_log. */
interface Summary {
  read_rows: number;
  read_mib: number;
  elapsed_ms: number;
  memory_mib: number;
}

export interface ProviderCell {
  name: string;
  url: string;
  n: number;
  p50: number;
  p95: number;
  max: number;
  statuses: Record<string, number>;
  digests: string[];
  rows: number;
  error?: string;
  /** Counting live (the code before, 3fbff5e) against the kept counts, same parameters, straight to ClickHouse; the server's summary of each's last run. */
  compare: Array<{ query: string; same_rows: boolean; rows: number; before_p50_ms: number; now_p50_ms: number; before_p95_ms: number; now_p95_ms: number; before: Summary; now: Summary }>;
}

function stats(ms: number[]) {
  return latencyStats(ms, [50, 95]);
}

function timed<T>(call: () => Promise<T>): Promise<Array<{ ms: number; value: T }>> {
  return timedRuns(ITERATIONS, call, { warmups: WARMUPS, minRuns: MIN_RUNS, budgetS: CELL_BUDGET_S });
}

function canonical(rows: Array<Record<string, unknown>>): string {
  return JSON.stringify(rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]).sort()))).sort());
}

async function runQuery(client: ClickHouseClient, q: { name: string; sql: string; params: Record<string, unknown> }): Promise<{ ms: number; rows: Array<Record<string, unknown>>; summary: Summary }> {
  const t = performance.now();
  const rs = await client.query({ query: q.sql, query_params: q.params, format: 'JSONEachRow', clickhouse_settings: { ...ACTIVITY_SETTINGS, log_comment: q.name, wait_end_of_query: 1 } });
  const rows = await rs.json<Record<string, unknown>>();
  const ms = performance.now() - t;
  const raw = rs.response_headers['x-clickhouse-summary'];
  const h = JSON.parse(typeof raw === 'string' ? raw : '{}') as Record<string, string>;
  const summary = { read_rows: Number(h.read_rows ?? NaN), read_mib: round(Number(h.read_bytes ?? NaN) / 2 ** 20, 1), elapsed_ms: round(Number(h.elapsed_ns ?? NaN) / 1e6, 1), memory_mib: round(Number(h.memory_usage ?? NaN) / 2 ** 20, 1) };
  return { ms, rows, summary };
}

export async function measureProviders(ch: ClickHouseHttp, client: ClickHouseClient, web: { url: string }, fx: ProvidersFixture): Promise<{ cells: ProviderCell[]; sample: unknown }> {
  const domain = DOMAINS[1]!;
  const specs: ProviderCellSpec[] = [];
  for (const path of ['providers', 'daily'] as const) {
    for (const d of [undefined, domain]) {
      for (const range of ['default', '30 days'] as const) specs.push({ path, range, ...(d ? { domain: d } : {}), ...(path === 'daily' ? { provider: 'gmail' } : {}) });
    }
  }
  const cells: ProviderCell[] = [];
  let sample: unknown;
  for (const spec of specs) {
    const qs = new URLSearchParams();
    if (spec.range === '30 days') {
      qs.set('start_date', day(fx.from));
      qs.set('end_date', day(addDays(fx.to, -1)));
    }
    if (spec.domain) qs.set('domain', spec.domain);
    const path = spec.path === 'providers' ? '/v1/deliverability/providers' : `/v1/deliverability/providers/${spec.provider}/daily`;
    const url = `${path}${qs.toString() ? `?${qs}` : ''}`;
    const name = `${spec.path === 'providers' ? 'providers' : `${spec.provider}/daily`}, ${spec.range}${spec.domain ? ', domain' : ''}`;
    const call = async () => {
      const res = await fetch(`${web.url}${url}`, { headers: { authorization: `Bearer ${fx.key}`, 'x-instance-slug': SLUG } });
      const text = await res.text();
      return { status: res.status, text };
    };
    const runs = await timed(call);
    const ok = runs.filter((r) => r.value.status === 200);
    const statuses: Record<string, number> = {};
    for (const r of runs) statuses[r.value.status] = (statuses[r.value.status] ?? 0) + 1;
    const last = ok[ok.length - 1]?.value.text;
    const body = last ? (JSON.parse(last) as { data?: unknown[]; days?: unknown[] }) : undefined;
    if (spec.path === 'providers' && spec.range === '30 days' && !spec.domain) sample = body;
    const cell: ProviderCell = {
      name,
      url,
      ...stats(ok.map((r) => r.ms)),
      statuses,
      digests: [...new Set(ok.map((r) => createHash('sha256').update(r.value.text).digest('hex')))],
      rows: (body?.data ?? body?.days ?? []).length,
      ...(ok.length === runs.length ? {} : { error: runs.find((r) => r.value.status !== 200)?.value.text.slice(0, 300) }),
      compare: [],
    };

    // Counting live (every mail's newest snapshot and every event of the range: the code before
    // the kept counts, 3fbff5e) against the kept counts (the stale-bucket check, then the kept rows
    // and whatever is stale counted live), alternated, with the route's own parameters; the rows compared.
    const range = dashboardRange(Object.fromEntries(qs), fx.tenant.tz);
    const f: CountsFilter = { ...(spec.domain ? { domain: spec.domain } : {}), ...(spec.provider ? { provider: spec.provider } : {}) };
    const keys: CountKey[] = spec.path === 'providers' ? ['provider'] : ['day'];
    const both = async (queries: Array<Promise<Awaited<ReturnType<typeof runQuery>>>>, first?: Awaited<ReturnType<typeof runQuery>>) => {
      const t0 = performance.now();
      const done = await Promise.all(queries);
      const all = first ? [first, ...done] : done;
      return {
        ms: performance.now() - t0 + (first?.ms ?? 0),
        rows: sumByKeys(keys, done.flatMap((d) => d.rows)) as unknown as Array<Record<string, unknown>>,
        summary: {
          read_rows: all.reduce((a, d) => a + d.summary.read_rows, 0),
          read_mib: round(all.reduce((a, d) => a + d.summary.read_mib, 0), 1),
          elapsed_ms: round(all.reduce((a, d) => a + d.summary.elapsed_ms, 0), 1),
          memory_mib: Math.max(...all.map((d) => d.summary.memory_mib)),
        },
      };
    };
    const live = () => both([runQuery(client, mailCountsQuery(fx.tenant, range, f, keys)), runQuery(client, eventCountsQuery(fx.tenant, range, f, keys))]);
    const kept = async () => {
      const staleRun = await runQuery(client, staleBucketsQuery(fx.tenant, range));
      const stale = bySource(staleRun.rows);
      return both([
        runQuery(client, keptCountsQuery(fx.tenant, range, f, keys, 'received', stale.received)),
        runQuery(client, keptCountsQuery(fx.tenant, range, f, keys, 'events', stale.events)),
        ...(stale.received.length ? [runQuery(client, mailCountsQuery(fx.tenant, range, f, keys, stale.received))] : []),
        ...(stale.events.length ? [runQuery(client, eventCountsQuery(fx.tenant, range, f, keys, stale.events))] : []),
      ], staleRun);
    };
    {
      const b: number[] = [];
      const n: number[] = [];
      let same = true;
      let rows = 0;
      let sumB: Summary | undefined;
      let sumN: Summary | undefined;
      for (let r = 0; r < COMPARE_RUNS; r++) {
        const [rb, rn] = r % 2 === 0 ? [await live(), await kept()] : (([x, y]) => [y, x])([await kept(), await live()]);
        b.push(rb!.ms);
        n.push(rn!.ms);
        rows = rn!.rows.length;
        sumB = rb!.summary;
        sumN = rn!.summary;
        if (canonical(rb!.rows) !== canonical(rn!.rows)) same = false;
      }
      const sb = stats(b);
      const sn = stats(n);
      cell.compare.push({ query: 'live → kept', same_rows: same, rows, before_p50_ms: sb.p50, now_p50_ms: sn.p50, before_p95_ms: sb.p95, now_p95_ms: sn.p95, before: sumB!, now: sumN! });
    }
    log(
      `providers cell ${name}: HTTP p50 ${cell.p50} p95 ${cell.p95} max ${cell.max} ms (${cell.n} runs, ${cell.rows} rows, ${cell.digests.length} bod${cell.digests.length === 1 ? 'y' : 'ies'})` +
        `${cell.error ? ` ERROR ${JSON.stringify(statuses)} ${cell.error}` : ''}; before vs now: ` +
        cell.compare.map((c) => `${c.query} ${c.same_rows ? 'same rows' : 'DIFFERENT ROWS'} (${c.rows}) p50 ${c.before_p50_ms} → ${c.now_p50_ms} ms, read ${fmt(c.before.read_rows)} → ${fmt(c.now.read_rows)} rows, ${c.before.read_mib} → ${c.now.read_mib} MiB, mem ${c.before.memory_mib} → ${c.now.memory_mib} MiB`).join('; '),
    );
    cells.push(cell);
  }
  return { cells, sample };
}

export function providersMarkdown(load: ProvidersLoad, cells: ProviderCell[], sample: unknown, machine: { before: number; after: number; loadavg: string }): string {
  const L: string[] = [];
  L.push('', `### Providers (issue 40): instance \`${SLUG}\`, ${fmt(load.mails)} mails in the mirror (${fmt(load.mirror_rows)} snapshots inserted, ${fmt(load.mirror_rows_after_merges)} rows after merges; parts: ${Object.entries(load.parts_active).map(([k, v]) => `${k} ${v}`).join(', ')})`, '');
  L.push(
    `Events: ${Object.entries(load.events).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}. Loaded in ${load.mirror_s} s (mirror) + ${load.events_s} s (events); merges settled after ${load.merges_wait_s} s; the kept counts (${fmt(load.kept_rows)} bucket rows) ready ${load.kept_s} s after the load. ` +
      `Busy cores before the cells ${machine.before}, after ${machine.after}; load average ${machine.loadavg}.`,
    '',
    `| cell | HTTP p50 / p95 / max ms | runs | rows | bodies | direct p50 ms, live (3fbff5e) → kept | rows read, live → kept | MiB read, live → kept | same rows | p95 < ${TARGET_P95_MS} ms |`,
    '|---|---|---:|---:|---:|---|---|---|---|---|',
  );
  for (const c of cells) {
    L.push(
      `| ${c.name} | ${c.error ? `error ${Object.keys(c.statuses).join(',')}` : `${fmt(c.p50, 1)} / ${fmt(c.p95, 1)} / ${fmt(c.max, 1)}`} | ${c.n} | ${c.rows} | ${c.digests.length} | ` +
        `${c.compare.map((x) => `${x.query} ${fmt(x.before_p50_ms, 1)} → ${fmt(x.now_p50_ms, 1)}`).join('; ')} | ` +
        `${c.compare.map((x) => `${x.query} ${fmt(x.before.read_rows)} → ${fmt(x.now.read_rows)}`).join('; ')} | ` +
        `${c.compare.map((x) => `${x.query} ${fmt(x.before.read_mib, 1)} → ${fmt(x.now.read_mib, 1)}`).join('; ')} | ${c.compare.every((x) => x.same_rows) ? 'yes' : '**no**'} | ${!c.error && c.p95 < TARGET_P95_MS ? 'yes' : '**no**'} |`,
    );
  }
  const worst = Math.max(...cells.map((c) => c.p95));
  L.push('', `Worst p95 ${fmt(worst, 1)} ms: target p95 < ${TARGET_P95_MS} ms ${worst < TARGET_P95_MS && cells.every((c) => !c.error) ? 'met' : '**not met**'}; live and kept counts ${cells.every((c) => c.compare.every((x) => x.same_rows)) ? 'gave the same rows in every cell' : '**differ in some cell**'}.`);
  const data = (sample as { data?: Array<Record<string, unknown>> } | undefined)?.data;
  if (data?.length) {
    L.push('', 'GET /v1/deliverability/providers over the 30 days (the data):', '', '| provider | sent | delivered | bounced hard / soft | complaints | complaint_rate | complaint / bounce status | opened / human |', '|---|---:|---:|---|---:|---:|---|---|');
    for (const r of data) {
      L.push(`| ${r.provider} | ${fmt(r.sent as number)} | ${fmt(r.delivered as number)} | ${fmt(r.bounced_hard as number)} / ${fmt(r.bounced_soft as number)} | ${fmt(r.complaints as number)} | ${r.complaint_rate ?? '—'} | ${r.complaint_status} / ${r.bounce_status} | ${fmt(r.opened as number)} / ${fmt(r.opened_human as number)} |`);
    }
  }
  return L.join('\n') + '\n';
}
