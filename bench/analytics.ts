/**
 * Benchmark (issue 5): activity analytics on ClickHouse. Loads 10 million open/click events for
 * one instance (plus ~3 % noise from other instances) with ClickHouse's own bulk insert
 * (INSERT ... SELECT FROM numbers()), and the matching rows of the `mails` mirror, into the
 * service started the way a user starts it (`node dist/runtime/start.js`: embedded Postgres and
 * ClickHouse, web and worker, fresh DATA_DIR). Then, over HTTP with a `mail:read` key:
 *  - p50 / p95 of GET /v1/activities/opens and /clicks, group_by none / mail_id / msg_id,
 *    page_size 100, start_date/end_date spanning the 30 days, without filters and with one of
 *    sender_id, custom_group_code, subject;
 *  - GET /v1/activities/opens/export?group_by=none (csv, then json) over a range of ≈ 1 million
 *    opens: rows/s and the web process's RSS (/proc/<pid>/status VmRSS sampled every 100 ms);
 *  - (issue 40) p50 / p95 of GET /v1/deliverability/providers and /providers/gmail/daily, the
 *    default range and 30 days, without and with `domain`, over a mirror of 10 M mails of an
 *    instance of its own (bench/analytics-providers.ts: the data, and the server's read rows per
 *    query from system.query_log); in each cell, counting live (every mail's newest snapshot: the
 *    code before the kept counts of analytics/deliverability/rollup.ts) is run beside the kept
 *    counts on the same data: same rows (checked) and both timings. The kept counts are those the
 *    worker's minute job made after the load (the time it took is reported).
 * In the same run, as comparisons:
 *  - (a) the same grouped queries on Postgres (the service's own embedded Postgres) over the same
 *    events, copied from ClickHouse with COPY into a table of the benchmark's own (bench_events,
 *    bench_mails) with the indexes a listmonk-style service would have;
 *  - the same queries sent straight to ClickHouse (no web process), to separate the service's
 *    overhead from the database's;
 *  - (b) ClickHouse's own `FORMAT CSVWithNames` over HTTP for the export's SELECT.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/analytics.js      (or: npm run bench:analytics)
 *
 * Environment (all optional):
 *   BENCH_EVENTS              events of the measured instance (default 10000000)
 *   BENCH_MAILS               mails they belong to, 10 events each on average (default 1000000)
 *   BENCH_MESSAGES            messages (msg_id) the mails belong to (default 10000)
 *   BENCH_NOISE_SHARE         extra events of 30 other instances, as a share of BENCH_EVENTS (default 0.03)
 *   BENCH_OPEN_SHARE          share of opens among the events, the rest clicks (default 0.7)
 *   BENCH_ITERATIONS          measured requests per HTTP / ClickHouse listing cell (default 20, after 2 warm-ups,
 *                             1 when the first takes over a second)
 *   BENCH_CELL_BUDGET_S       stop a cell's measured requests after this many seconds, once MIN_RUNS (3) are
 *                             done (default 8): keeps the run to minutes when queries take seconds
 *   BENCH_PG_ITERATIONS       measured runs per Postgres cell (default 2, after 1 warm-up)
 *   BENCH_PG_TIMEOUT_S        statement_timeout of a Postgres comparison query (default 120)
 *   BENCH_POSTGRES=0          skip the Postgres comparison (and its load)
 *   BENCH_EXPORT_ROWS         opens the export range must hold at least (default 1000000)
 *   BENCH_EXPORT_RUNS         runs of each export variant (default 2)
 *   BENCH_PARTS               which measurements to run, comma-separated, of listings (with the Postgres comparison),
 *                             exports, providers (default all three); the listings' data is loaded in every case
 *   BENCH_PROVIDER_MAILS      mails of the providers instance's mirror (default 10000000)
 *   BENCH_PROVIDER_COMPARE_RUNS  runs of the old and the current SQL per providers cell, alternated (default 5)
 *   BENCH_WAIT_ENDPOINTS=S    if the activity endpoints answer 404, poll them up to S seconds
 *                             before measuring (they are optional: without them the bench
 *                             reports the ClickHouse-direct and Postgres figures only)
 *   BENCH_WAIT_IDLE=SECONDS   first wait (up to that long) for the shared machine to be idle
 *   BENCH_HOLD_S=SECONDS      after the measurements, keep the service running that long (its ClickHouse URL is
 *                             logged) to EXPLAIN queries by hand on the same data
 *   BENCH_KEEP_DATA=1         keep the temp DATA_DIR (printed) instead of deleting it
 *   BENCH_COMPARE_WITH=DIR    another checkout of the service, built (`npx tsc -p tsconfig.json` there),
 *                             e.g. a `git worktree` of the code before a change: its web process
 *                             (DIR/dist/runtime/web.js) is started against the same databases, with
 *                             the same environment, and every HTTP listing cell alternates its
 *                             requests between the two webs (A B, B A, ...), so both are measured at
 *                             the same moments of the machine; its CSV export runs after this one's.
 *                             Both must agree on the schema (the same migrations)
 *
 * The data: 10,000 messages of 100 recipients (1 M mails) received over the 30 days before
 * today (UTC), 5 senders, 20 campaigns (custom_group_code), 5 subjects; each mail gets 10 events
 * (70 % opens), each between 1 minute and 3 days after its reception; 8 % of opens are flagged
 * privacy_proxy and 3 % of clicks link_scanner; each mail has a provider (gmail 40 %, microsoft
 * 15 %, yahoo 10 %, google_workspace 10 %, apple 5 %, other 20 %) on its events and mirror row. Every figure is a single sequential client on
 * loopback; the bench process, web, Postgres and ClickHouse share the same cores.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { clickHouseFetch, databaseOf } from '../analytics/client.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { createSender } from '../domain/senders/senders.js';
import { createPool, type Pool } from '../sql/pool.js';
import { freePort } from '../config/ports.js';
import { readServices } from '../config/services-file.js';
import { assertBuilt, checkStopped, cleanUp, cpuSnapshot, partsBetween, runBench, startService, stopService, type CpuSnapshot, type Service, type Stopped } from './service.js';
import { benchTenant, verifiedDomain } from './fixtures.js';
import { loadProviders, measureProviders, providersMarkdown, seedProviders, PROVIDER_MAILS, type ProviderCell, type ProvidersLoad } from './analytics-providers.js';
import { createClickHouseClient } from '../analytics/client.js';
import { coresBetween, intEnv, latencyStats, loadavg, machineLoad, memoryMiB, round, sleep, timedRuns } from './proc.js';

const numEnv = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return process.env[name] && Number.isFinite(v) && v >= 0 ? v : fallback;
};
const EVENTS = intEnv('BENCH_EVENTS', 10_000_000);
const MAILS = intEnv('BENCH_MAILS', 1_000_000);
const MESSAGES = intEnv('BENCH_MESSAGES', 10_000);
const NOISE_SHARE = numEnv('BENCH_NOISE_SHARE', 0.03);
const OPEN_SHARE = Math.min(1, numEnv('BENCH_OPEN_SHARE', 0.7));
const ITERATIONS = intEnv('BENCH_ITERATIONS', 20);
const WARMUPS = 2;
/** Seconds of measured requests per cell (HTTP, ClickHouse direct): fewer than ITERATIONS when slow, never fewer than MIN_RUNS. */
const CELL_BUDGET_S = intEnv('BENCH_CELL_BUDGET_S', 8);
const MIN_RUNS = 3;
const PG_ITERATIONS = intEnv('BENCH_PG_ITERATIONS', 2);
const PG_TIMEOUT_S = intEnv('BENCH_PG_TIMEOUT_S', 120);
const POSTGRES = process.env.BENCH_POSTGRES !== '0';
const EXPORT_ROWS = intEnv('BENCH_EXPORT_ROWS', 1_000_000);
const EXPORT_RUNS = intEnv('BENCH_EXPORT_RUNS', 2);
const WAIT_ENDPOINTS_S = numEnv('BENCH_WAIT_ENDPOINTS', 0);
const COMPARE_WITH = process.env.BENCH_COMPARE_WITH || undefined;
const PARTS = new Set((process.env.BENCH_PARTS || 'listings,exports,providers').split(',').map((p) => p.trim()));
const DAYS = 30;
const NOISE_INSTANCES = 30;
const SENDERS = 5;
const CAMPAIGNS = 20;
const SUBJECTS = ['Weekly digest', 'Your order update', 'New arrivals this week', 'Account notice', 'Spring sale'];
const PAGE_SIZE = 100;
const RSS_SAMPLE_MS = 100;
const MERGE_WAIT_MS = 180_000;
const LOAD_CHUNK = 2_000_000;

const TARGET_P95_MS = 150;
const TARGET_SPEEDUP = 20;
const TARGET_EXPORT_SHARE = 0.5;
const TARGET_RSS_MIB = 200;

const DOMAIN = 'mail.bench-analytics.example.com';
const SLUG = 'bench-analytics';

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const fmt = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n) ? '—' : round(n, digits).toLocaleString('en-US');

// ---------------------------------------------------------------- process accounting (/proc)

interface CpuCores {
  web: number;
  postgres: number;
  clickhouse: number;
  bench: number;
  machine_busy: number;
  other: number;
  /** CPU seconds per dyno / shard when there are several (bench/service.ts). */
  cpu_seconds_by_part: Record<string, number>;
}
function coresUsed(a: CpuSnapshot, b: CpuSnapshot): CpuCores {
  const wall = (b.at - a.at) / 1000 || 1;
  const per = (k: 'web' | 'postgres' | 'clickhouse' | 'bench') => (b[k] - a[k]) / wall;
  const busy = coresBetween(a.machine, b.machine).busy;
  const ours = per('web') + per('postgres') + per('clickhouse') + per('bench');
  return {
    web: round(per('web'), 2),
    postgres: round(per('postgres'), 2),
    clickhouse: round(per('clickhouse'), 2),
    bench: round(per('bench'), 2),
    machine_busy: round(busy, 2),
    // Busy cores charged to none of the above (worker, supervisor, other sessions, the kernel).
    other: round(busy - ours, 2),
    cpu_seconds_by_part: partsBetween(a, b),
  };
}

// ---------------------------------------------------------------- ClickHouse over HTTP

interface ClickHouse {
  /** Server root (no database path), with the credentials of services.json (see clickHouseFetch). */
  root: string;
  database: string;
}

function chUrl(ch: ClickHouse, params: Record<string, string | number> = {}, settings: Record<string, string | number> = {}): string {
  const u = new URL(ch.root);
  u.searchParams.set('database', ch.database);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(`param_${k}`, String(v));
  for (const [k, v] of Object.entries(settings)) u.searchParams.set(k, String(v));
  return u.toString();
}

/** One statement; the answer's text (throws with ClickHouse's message on an error). */
async function chText(ch: ClickHouse, sql: string, params: Record<string, string | number> = {}, settings: Record<string, string | number> = {}): Promise<string> {
  const res = await clickHouseFetch(chUrl(ch, params, settings), { method: 'POST', body: sql });
  const body = await res.text();
  if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${body.slice(0, 2000)}\nquery: ${sql.slice(0, 500)}`);
  return body;
}
async function chRows<T>(ch: ClickHouse, sql: string, params: Record<string, string | number> = {}): Promise<T[]> {
  const text = await chText(ch, `${sql}\nFORMAT JSONEachRow`, params);
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}
async function chNumber(ch: ClickHouse, sql: string, params: Record<string, string | number> = {}): Promise<number> {
  const [row] = await chRows<{ n: string | number }>(ch, sql, params);
  return Number(row?.n ?? NaN);
}

/** Bytes and lines of a streamed body, read chunk by chunk (never held whole). */
async function countStream(body: WebReadableStream<Uint8Array> | ReadableStream<Uint8Array> | null): Promise<{ bytes: number; lines: number }> {
  let bytes = 0;
  let lines = 0;
  if (!body) return { bytes, lines };
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines++;
  }
  return { bytes, lines };
}

// ---------------------------------------------------------------- fixtures

interface Fixture {
  instanceId: number;
  key: string;
  senders: Array<{ id: number; email: string }>;
  /** First day of the data (UTC midnight) and the day after its last. */
  from: Date;
  to: Date;
}

const day = (d: Date) => d.toISOString().slice(0, 10);
const chTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

async function seed(pool: Pool): Promise<Fixture> {
  const tenant = await benchTenant(pool, SLUG, 'Analytics benchmark');
  await verifiedDomain(tenant, pool, DOMAIN);
  const senders: Fixture['senders'] = [];
  for (const name of ['news', 'orders', 'hello', 'billing', 'promo'].slice(0, SENDERS)) {
    const s = await createSender(tenant, pool, { email: `${name}@${DOMAIN}`, name: `Example ${name}` });
    senders.push({ id: Number(s.id), email: s.email_address });
  }
  const key = await createApiKey(pool, { instanceSlug: SLUG, scopes: ['mail:read'] });
  const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
  return { instanceId: tenant.instanceId, key: key.key, senders, from: addDays(today, -DAYS), to: today };
}

/**
 * The events, generated inside ClickHouse. Event `number` belongs to mail `number % MAILS`, which
 * belongs to message `intDiv(mail, MAILS / MESSAGES)`; messages are received evenly over the
 * first DAYS - 3 days, and each event happens 1 minute to 3 days after its mail's reception.
 */
function eventsSelect(opts: { instance: string; events: string; mails: string; prefix: string; eventIdBase: string; start?: number }): string {
  const perMessage = Math.max(1, Math.floor(MAILS / MESSAGES));
  const stepMs = Math.floor(((DAYS - 3) * 86_400_000) / MESSAGES);
  const spreadMs = 3 * 86_400_000 - 120_000;
  return `
SELECT
  ${opts.instance} AS instance_id,
  if(cityHash64(number, 1) % 1000 < {openPermille:UInt32}, 'open', 'click') AS event_type,
  CAST(NULL AS Nullable(UInt8)) AS status,
  received + toIntervalMillisecond(60000 + cityHash64(number, 2) % ${spreadMs}) AS occurred_at,
  ${opts.eventIdBase} + number AS event_id,
  concat('${opts.prefix}M', leftPad(toString(mail_n), 20, '0')) AS mail_id,
  concat('${opts.prefix}G', leftPad(toString(msg_n), 20, '0')) AS msg_id,
  concat('rcpt', toString(mail_n), '@inbox', toString(mail_n % 50), '.example.org') AS recipient,
  multiIf(cityHash64(mail_n, 11) % 100 < 40, 'gmail', cityHash64(mail_n, 11) % 100 < 55, 'microsoft', cityHash64(mail_n, 11) % 100 < 65, 'yahoo',
          cityHash64(mail_n, 11) % 100 < 75, 'google_workspace', cityHash64(mail_n, 11) % 100 < 80, 'apple', 'other') AS provider,
  CAST(arrayElement({senderIds:Array(UInt64)}, msg_n % ${SENDERS} + 1) AS Nullable(UInt64)) AS sender_id,
  CAST(arrayElement({senderEmails:Array(String)}, msg_n % ${SENDERS} + 1) AS Nullable(String)) AS sender,
  concat(arrayElement({subjects:Array(String)}, intDiv(msg_n, ${SENDERS}) % ${SUBJECTS.length} + 1), ' #', toString(msg_n)) AS subject,
  if(msg_n % 2 = 0, concat('order-', toString(mail_n)), NULL) AS custom_msg_id,
  CAST(concat('campaign-', leftPad(toString(msg_n % ${CAMPAIGNS}), 2, '0')) AS Nullable(String)) AS custom_group_code,
  received AS mail_received_at,
  CAST(received + toIntervalSecond(30) AS Nullable(DateTime64(3, 'UTC'))) AS sent_at,
  if(event_type = 'click', concat('https://shop.example.com/p/', toString(msg_n % 997), '?utm_campaign=campaign-', leftPad(toString(msg_n % ${CAMPAIGNS}), 2, '0'), '&l=', toString(cityHash64(number, 3) % 4)), NULL) AS url,
  arrayElement(['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
                'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
                'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
                'Mozilla/5.0'], cityHash64(number, 4) % 4 + 1) AS user_agent,
  IPv4NumToString(toUInt32(cityHash64(mail_n, 5) % 4294967295)) AS ip,
  multiIf(event_type = 'open' AND cityHash64(number, 6) % 100 < 8, 'privacy_proxy',
          event_type = 'click' AND cityHash64(number, 6) % 100 < 3, 'link_scanner', '') AS machine,
  now64(3, 'UTC') AS shipped_at
FROM
(
  SELECT number, number % ${opts.mails} AS mail_n, intDiv(mail_n, ${perMessage}) AS msg_n,
         toDateTime64({from:String}, 3, 'UTC') + toIntervalMillisecond(msg_n * ${stepMs}) AS received
  FROM numbers(${opts.start ?? 0}, ${opts.events})
)`;
}

const EVENT_COLUMNS =
  'instance_id, event_type, status, occurred_at, event_id, mail_id, msg_id, recipient, provider, sender_id, sender, subject, custom_msg_id, custom_group_code, mail_received_at, sent_at, url, user_agent, ip, machine, shipped_at';

interface Load {
  events_s: number;
  noise_s: number;
  mirror_s: number;
  merges_wait_s: number;
  instance_events: number;
  instance_opens: number;
  instance_clicks: number;
  noise_events: number;
  mirror_mails: number;
  /** Per table of TABLES. */
  parts_active: Record<string, number>;
  bytes_on_disk: Record<string, number>;
  /** CLICKHOUSE_SHARDS > 1: the rows of mail_events each shard holds (its mail_events_local). */
  rows_by_shard?: number[];
}

/** The service's ClickHouse tables whose parts and size the report gives. */
const TABLES = ['mail_events', 'mails', 'mail_events_by_msg', 'mail_events_by_group'];

async function loadClickHouse(ch: ClickHouse, f: Fixture): Promise<Load> {
  const params = {
    openPermille: Math.round(OPEN_SHARE * 1000),
    senderIds: `[${f.senders.map((s) => s.id).join(',')}]`,
    senderEmails: `[${f.senders.map((s) => `'${s.email}'`).join(',')}]`,
    subjects: `[${SUBJECTS.map((s) => `'${s}'`).join(',')}]`,
    from: chTime(f.from),
  };
  // In cluster mode (CLICKHOUSE_SHARDS) the INSERTs go through Distributed tables: in the
  // foreground, so every row is on its shard before anything is measured (as the pump inserts).
  const settings = { max_insert_threads: 2, max_execution_time: 1200, distributed_foreground_insert: 1 };
  let t = performance.now();
  // By chunks of LOAD_CHUNK events: one INSERT of 10 M on a busy machine can outlast fetch's 300 s
  // wait for the answer's headers. Event `number` is the same in any chunking.
  for (let start = 0; start < EVENTS; start += LOAD_CHUNK) {
    const events = String(Math.min(LOAD_CHUNK, EVENTS - start));
    await chText(ch, `INSERT INTO mail_events (${EVENT_COLUMNS}) ${eventsSelect({ instance: String(f.instanceId), events, mails: String(MAILS), prefix: '01JBA', eventIdBase: '1', start })}`, params, settings);
  }
  const eventsS = (performance.now() - t) / 1000;
  log(`ClickHouse: ${fmt(EVENTS)} events of instance ${f.instanceId} inserted in ${eventsS.toFixed(1)} s`);

  // Noise: 30 other instances, with their own mails and ids, over the same days.
  const noise = Math.round(EVENTS * NOISE_SHARE);
  t = performance.now();
  if (noise > 0) {
    await chText(
      ch,
      `INSERT INTO mail_events (${EVENT_COLUMNS}) ${eventsSelect({
        instance: `toUInt64(900000 + number % ${NOISE_INSTANCES})`,
        events: String(noise),
        mails: String(Math.max(1, Math.round(MAILS * NOISE_SHARE))),
        prefix: '01JBN',
        eventIdBase: String(EVENTS + 1),
      })}`,
      params,
      settings,
    );
  }
  const noiseS = (performance.now() - t) / 1000;

  // The mirror: one row per mail with its counts, as the pump's last snapshot would have it; by
  // slices of the mails (a hash of mail_id), for the same reason.
  t = performance.now();
  const slices = Math.max(1, Math.ceil(EVENTS / LOAD_CHUNK / 2));
  for (let slice = 0; slice < slices; slice++) await chText(
    ch,
    `INSERT INTO mails (instance_id, received_at, mail_id, msg_id, recipient, provider, subject, sender_id, sender, status, bounce_class,
                        opens, clicks, queued_at, sent_at, delay, custom_msg_id, custom_group_code, version)
     SELECT instance_id, any(mail_received_at), mail_id, any(msg_id), any(recipient), any(provider), any(subject), any(sender_id), any(sender), 3, '',
            countIf(event_type = 'open'), countIf(event_type = 'click'), any(mail_received_at) + toIntervalSecond(1), any(sent_at), 30,
            any(custom_msg_id), any(custom_group_code), toUInt64(toUnixTimestamp64Micro(now64(6)))
       FROM mail_events WHERE cityHash64(mail_id) % ${slices} = ${slice}
      GROUP BY instance_id, mail_id`,
    {},
    { max_execution_time: 1200, distributed_foreground_insert: 1 },
  );
  const mirrorS = (performance.now() - t) / 1000;
  log(`ClickHouse: ${fmt(noise)} noise events in ${noiseS.toFixed(1)} s, mirror of mails in ${mirrorS.toFixed(1)} s`);

  // Let background merges settle: listings read with FINAL, whose cost depends on the parts.
  t = performance.now();
  for (let idle = 0; idle < 3 && performance.now() - t < MERGE_WAIT_MS; ) {
    await sleep(2_000);
    const merging = await chNumber(ch, 'SELECT count() AS n FROM system.merges WHERE database = currentDatabase()');
    idle = merging === 0 ? idle + 1 : 0;
  }
  const mergesWaitS = (performance.now() - t) / 1000;

  const counts = await chRows<{ event_type: string; n: string }>(
    ch,
    'SELECT event_type, count() AS n FROM mail_events FINAL WHERE instance_id = {i:UInt64} GROUP BY event_type',
    { i: f.instanceId },
  );
  const by = Object.fromEntries(counts.map((r) => [r.event_type, Number(r.n)]));
  const parts = await chRows<{ table: string; parts: string; bytes: string }>(
    ch,
    // A cluster's shard-local tables are <table>_local (this node's part only).
    `SELECT replaceRegexpOne(table, '_local$', '') AS table, count() AS parts, sum(bytes_on_disk) AS bytes FROM system.parts
      WHERE database = currentDatabase() AND active AND replaceRegexpOne(table, '_local$', '') IN {tables:Array(String)} GROUP BY table`,
    { tables: `[${TABLES.map((table) => `'${table}'`).join(',')}]` }, // an Array(String) parameter's text form
  );
  const p = Object.fromEntries(parts.map((r) => [r.table, r]));
  return {
    events_s: round(eventsS, 1),
    noise_s: round(noiseS, 1),
    mirror_s: round(mirrorS, 1),
    merges_wait_s: round(mergesWaitS, 1),
    instance_events: (by.open ?? 0) + (by.click ?? 0),
    instance_opens: by.open ?? 0,
    instance_clicks: by.click ?? 0,
    noise_events: await chNumber(ch, 'SELECT count() AS n FROM mail_events FINAL WHERE instance_id != {i:UInt64}', { i: f.instanceId }),
    mirror_mails: await chNumber(ch, 'SELECT count() AS n FROM mails FINAL WHERE instance_id = {i:UInt64}', { i: f.instanceId }),
    parts_active: Object.fromEntries(TABLES.map((table) => [table, Number(p[table]?.parts ?? 0)])),
    bytes_on_disk: Object.fromEntries(TABLES.map((table) => [table, Number(p[table]?.bytes ?? 0)])),
  };
}

// ---------------------------------------------------------------- Postgres comparison table

const PG_EVENT_COLUMNS = 'instance_id, event_type, occurred_at, event_id, mail_id, msg_id, recipient, sender_id, sender, subject, custom_msg_id, custom_group_code, mail_received_at, sent_at, url, machine';
const PG_MAIL_COLUMNS = 'instance_id, received_at, mail_id, msg_id, recipient, subject, sender_id, sender, status, opens, clicks, sent_at, custom_msg_id, custom_group_code';

interface PgLoad {
  copy_events_s: number;
  copy_mails_s: number;
  index_s: number;
  vacuum_analyze_s: number;
  rows: number;
  table_mib: number;
  indexes_mib: number;
  indexes: string[];
}

/**
 * The same events in the service's Postgres, as a listmonk-style service would store them: one
 * events table with the mail's attributes (denormalized, so the grouped query needs no join,
 * which favours Postgres) and a mails table for rcpt_count. Copied from ClickHouse (CSV) with
 * COPY, so both hold exactly the same rows. UNLOGGED only speeds up the load; it does not change
 * how the queries run.
 */
async function loadPostgres(databaseUrl: string, ch: ClickHouse, f: Fixture): Promise<PgLoad> {
  const c = new pg.Client({ connectionString: databaseUrl, application_name: 'cartero-bench-load' });
  await c.connect();
  try {
    await c.query(`SET TimeZone = 'UTC'`);
    await c.query(`SET maintenance_work_mem = '512MB'`);
    await c.query('DROP TABLE IF EXISTS bench_events, bench_mails');
    await c.query(`CREATE UNLOGGED TABLE bench_events (
      instance_id bigint NOT NULL, event_type text NOT NULL, occurred_at timestamptz NOT NULL, event_id bigint NOT NULL,
      mail_id text NOT NULL, msg_id text NOT NULL, recipient text NOT NULL, sender_id bigint, sender text, subject text NOT NULL,
      custom_msg_id text, custom_group_code text, mail_received_at timestamptz NOT NULL, sent_at timestamptz, url text, machine text NOT NULL)`);
    await c.query(`CREATE UNLOGGED TABLE bench_mails (
      instance_id bigint NOT NULL, received_at timestamptz NOT NULL, mail_id text NOT NULL, msg_id text NOT NULL, recipient text NOT NULL,
      subject text NOT NULL, sender_id bigint, sender text, status smallint NOT NULL, opens integer NOT NULL, clicks integer NOT NULL,
      sent_at timestamptz, custom_msg_id text, custom_group_code text)`);

    const copy = async (table: string, columns: string, select: string): Promise<number> => {
      const t = performance.now();
      const res = await clickHouseFetch(chUrl(ch, {}, { max_execution_time: 1200 }), { method: 'POST', body: `${select} FORMAT CSV` });
      if (!res.ok || !res.body) throw new Error(`ClickHouse ${res.status}: ${await res.text()}`);
      const sink = c.query(copyStreams.from(`COPY ${table} (${columns}) FROM STDIN WITH (FORMAT csv, NULL '\\N')`));
      await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), sink);
      return (performance.now() - t) / 1000;
    };
    const copyEventsS = await copy('bench_events', PG_EVENT_COLUMNS, `SELECT ${PG_EVENT_COLUMNS} FROM mail_events FINAL WHERE event_type IN ('open', 'click')`);
    log(`Postgres: bench_events copied from ClickHouse in ${copyEventsS.toFixed(1)} s`);
    const copyMailsS = await copy('bench_mails', PG_MAIL_COLUMNS, `SELECT ${PG_MAIL_COLUMNS} FROM mails FINAL`);

    let t = performance.now();
    const indexes = [
      'CREATE INDEX bench_events_time_idx ON bench_events (instance_id, event_type, occurred_at)',
      'CREATE INDEX bench_events_mail_idx ON bench_events (mail_id, occurred_at)',
      'CREATE INDEX bench_events_msg_idx ON bench_events (instance_id, msg_id)',
      'ALTER TABLE bench_mails ADD PRIMARY KEY (mail_id)',
      'CREATE INDEX bench_mails_msg_idx ON bench_mails (instance_id, msg_id)',
      'CREATE INDEX bench_mails_received_idx ON bench_mails (instance_id, received_at)',
    ];
    for (const sql of indexes) await c.query(sql);
    const indexS = (performance.now() - t) / 1000;
    t = performance.now();
    await c.query('VACUUM (ANALYZE) bench_events');
    await c.query('VACUUM (ANALYZE) bench_mails');
    const vacuumS = (performance.now() - t) / 1000;
    const { rows } = await c.query<{ rows: string; table_bytes: string; index_bytes: string }>(
      `SELECT (SELECT count(*) FROM bench_events) AS rows, pg_table_size('bench_events') AS table_bytes, pg_indexes_size('bench_events') AS index_bytes`,
    );
    const r = rows[0]!;
    log(`Postgres: ${fmt(Number(r.rows))} events, indexes in ${indexS.toFixed(1)} s, VACUUM ANALYZE in ${vacuumS.toFixed(1)} s`);
    return {
      copy_events_s: round(copyEventsS, 1),
      copy_mails_s: round(copyMailsS, 1),
      index_s: round(indexS, 1),
      vacuum_analyze_s: round(vacuumS, 1),
      rows: Number(r.rows),
      table_mib: round(Number(r.table_bytes) / 2 ** 20),
      indexes_mib: round(Number(r.index_bytes) / 2 ** 20),
      indexes,
    };
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------- the queries

type Kind = 'opens' | 'clicks';
type GroupBy = 'none' | 'mail_id' | 'msg_id';
interface Filter {
  name: string;
  /** Query string of the HTTP listing. */
  http: Record<string, string>;
  /** SQL condition (same in ClickHouse and Postgres), with $sender_id etc. substituted below. */
  sql: string;
}

function filtersOf(f: Fixture): Filter[] {
  const sender = f.senders[0]!;
  return [
    { name: 'no filter', http: {}, sql: '' },
    { name: `sender_id=${sender.id}`, http: { sender_id: String(sender.id) }, sql: `sender_id = ${sender.id}` },
    { name: 'custom_group_code=campaign-07', http: { custom_group_code: 'campaign-07' }, sql: `custom_group_code = 'campaign-07'` },
    { name: 'subject~"ARRIVALS"', http: { subject: 'ARRIVALS' }, sql: `lower(subject) LIKE '%arrivals%'` },
  ];
}

/**
 * The listing's page as SQL, for ClickHouse (dialect 'ch': FINAL, uniqExact, any) and Postgres
 * ('pg'): filters before grouping, counts from the events in range, newest activity first,
 * PAGE_SIZE + 1 rows (has_more). total_items of group_by none is a second query (`count`).
 */
function listingSql(dialect: 'ch' | 'pg', kind: Kind, groupBy: GroupBy, f: Fixture, filter: Filter): { page: string; count?: string } {
  const type = kind === 'opens' ? 'open' : 'click';
  const ch = dialect === 'ch';
  const from = ch ? `'${chTime(f.from)}'` : `'${f.from.toISOString()}'::timestamptz`;
  const to = ch ? `'${chTime(f.to)}'` : `'${f.to.toISOString()}'::timestamptz`;
  const table = ch ? 'mail_events FINAL' : 'bench_events';
  const where = `instance_id = ${f.instanceId} AND event_type = '${type}' AND occurred_at >= ${from} AND occurred_at < ${to}${filter.sql ? ` AND ${filter.sql}` : ''}`;
  const anyOf = (col: string) => (ch ? `any(${col})` : `min(${col})`);
  const distinct = (expr: string) => (ch ? `uniqExact(${expr})` : `count(DISTINCT ${expr})`);
  const limit = `LIMIT ${PAGE_SIZE + 1}`;
  const at = kind === 'opens' ? 'opened' : 'clicked';
  if (groupBy === 'none') {
    return {
      page: `SELECT mail_id, msg_id, recipient AS "to", sender, ${kind === 'clicks' ? 'url AS url_redirect, ' : ''}occurred_at AS ${at}_at, sent_at, custom_msg_id, custom_group_code
               FROM ${table} WHERE ${where} ORDER BY occurred_at DESC, event_id DESC ${limit}`,
      count: `SELECT count(*) AS n FROM ${table} WHERE ${where}`,
    };
  }
  const count = kind === 'opens' ? 'open_count' : 'click_count';
  if (groupBy === 'mail_id') {
    return {
      page: `SELECT mail_id, ${anyOf('msg_id')} AS msg_id, ${anyOf('recipient')} AS "to", ${anyOf('sender')} AS sender, count(*) AS ${count},
                    ${kind === 'clicks' ? `${distinct('url')} AS links_clicked, ` : ''}min(occurred_at) AS first_${at}_at, max(occurred_at) AS last_${at}_at,
                    ${anyOf('sent_at')} AS sent_at, ${anyOf('custom_msg_id')} AS custom_msg_id, ${anyOf('custom_group_code')} AS custom_group_code
               FROM ${table} WHERE ${where} GROUP BY mail_id ORDER BY last_${at}_at DESC, mail_id ${limit}`,
    };
  }
  const recipients = kind === 'opens' ? 'recipients_opened' : 'recipients_clicked';
  const links = kind === 'clicks' ? `${ch ? 'uniqExact(mail_id, url)' : 'count(DISTINCT (mail_id, url))'} AS links_clicked, ` : '';
  const grouped = `SELECT msg_id, ${anyOf('sender')} AS sender, ${anyOf('subject')} AS subject, count(*) AS ${count}, ${distinct('mail_id')} AS ${recipients}, ${links}
                    min(occurred_at) AS first_${at}_at, max(occurred_at) AS last_${at}_at, ${anyOf('custom_msg_id')} AS custom_msg_id, ${anyOf('custom_group_code')} AS custom_group_code
               FROM ${table} WHERE ${where} GROUP BY msg_id ORDER BY last_${at}_at DESC, msg_id ${limit}`;
  if (ch) {
    // ClickHouse inlines a CTE at each use, so rcpt_count comes from one pass over the
    // instance's mirror rows (one row per mail) instead of a second aggregation of the events.
    return {
      page: `SELECT g.*, r.rcpt_count FROM (${grouped}) AS g
               LEFT JOIN (SELECT msg_id, count() AS rcpt_count FROM mails FINAL WHERE instance_id = ${f.instanceId} GROUP BY msg_id) AS r
                 ON r.msg_id = g.msg_id
              ORDER BY g.last_${at}_at DESC, g.msg_id`,
    };
  }
  // Postgres materializes a CTE used twice: rcpt_count by index for the page's messages only.
  return {
    page: `WITH g AS (${grouped})
           SELECT g.*, (SELECT count(*) FROM bench_mails m WHERE m.instance_id = ${f.instanceId} AND m.msg_id = g.msg_id) AS rcpt_count
             FROM g ORDER BY g.last_${at}_at DESC, g.msg_id`,
  };
}

// ---------------------------------------------------------------- measurement

interface Stats {
  n: number;
  p50: number;
  p95: number;
  max: number;
}
function stats(ms: number[]): Stats {
  return latencyStats(ms, [50, 95]);
}

interface HttpAnswer {
  status: number;
  ms: number;
  rows: number;
  has_more: boolean | null;
  total_items: number | null;
  /** SHA-256 of the response body, to compare two webs' answers byte for byte. */
  digest?: string;
  error?: string;
}

/** A web process answering the API: the service's own, or the comparison's (BENCH_COMPARE_WITH). */
type Web = Pick<Service, 'url' | 'webPid'>;

async function httpListing(service: Web, fx: Fixture, kind: Kind, groupBy: GroupBy, filter: Filter): Promise<HttpAnswer> {
  const qs = new URLSearchParams({ group_by: groupBy, page_size: String(PAGE_SIZE), start_date: day(fx.from), end_date: day(addDays(fx.to, -1)), ...filter.http });
  const t = performance.now();
  const res = await fetch(`${service.url}/v1/activities/${kind}?${qs}`, { headers: { authorization: `Bearer ${fx.key}`, 'x-instance-slug': SLUG } });
  const text = await res.text();
  const ms = performance.now() - t;
  if (res.status !== 200) return { status: res.status, ms, rows: 0, has_more: null, total_items: null, error: text.slice(0, 500) };
  const body = JSON.parse(text) as { data: unknown[]; pagination: { has_more: boolean; total_items: number | null } };
  const digest = createHash('sha256').update(text).digest('hex');
  return { status: res.status, ms, rows: body.data.length, has_more: body.pagination.has_more, total_items: body.pagination.total_items, digest };
}

type HttpStats = Stats & {
  statuses: Record<string, number>;
  rows: number;
  has_more: boolean | null;
  total_items: number | null;
  /** The distinct response bodies (SHA-256) of the cell's 200 answers: one, as the data does not change. */
  digests: string[];
  error?: string;
};

/** Latency and the last page's shape of a cell's HTTP answers. */
function httpStats(answers: HttpAnswer[]): HttpStats {
  const ok = answers.filter((a) => a.status === 200);
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const last = ok[ok.length - 1];
  const bad = answers.find((a) => a.status !== 200);
  return {
    ...stats(ok.map((a) => a.ms)),
    statuses,
    rows: last?.rows ?? 0,
    has_more: last?.has_more ?? null,
    total_items: last?.total_items ?? null,
    digests: [...new Set(ok.map((a) => a.digest ?? ''))],
    ...(bad || !ok.length ? { error: bad?.error ?? 'no answer' } : {}),
  };
}

interface Cell {
  kind: Kind;
  group_by: GroupBy;
  filter: string;
  http?: HttpStats;
  /** The same requests to the comparison's web (BENCH_COMPARE_WITH), alternated with `http`. */
  compare?: HttpStats;
  clickhouse: Stats & { rows: number; count?: number };
  postgres?: Stats & { rows: number; count?: number; error?: string };
}

/**
 * Warm-ups (WARMUPS, or 1 when the first took over a second), then up to `runs` measured calls,
 * stopping once CELL_BUDGET_S of measured time has passed and MIN_RUNS are done.
 */
function timed<T>(runs: number, call: () => Promise<T>): Promise<Array<{ ms: number; value: T }>> {
  return timedRuns(runs, call, { warmups: WARMUPS, minRuns: MIN_RUNS, budgetS: CELL_BUDGET_S });
}

/**
 * timed() for two calls measured alternately, A then B, then B then A, ..., so that both meet the
 * same moments of a shared machine; the budget is twice a cell's.
 */
async function timedPair<T>(runs: number, a: () => Promise<T>, b: () => Promise<T>): Promise<[T[], T[]]> {
  for (let i = 0; i < WARMUPS; i++) {
    const t = performance.now();
    await a();
    await b();
    if (performance.now() - t > 2_000) break;
  }
  const outA: T[] = [];
  const outB: T[] = [];
  const start = performance.now();
  for (let i = 0; outA.length < runs && (outA.length < MIN_RUNS || performance.now() - start < 2 * CELL_BUDGET_S * 1000); i++) {
    if (i % 2 === 0) {
      outA.push(await a());
      outB.push(await b());
    } else {
      outB.push(await b());
      outA.push(await a());
    }
  }
  return [outA, outB];
}

async function measureClickHouse(ch: ClickHouse, sql: { page: string; count?: string }, runs: number): Promise<Stats & { rows: number; count?: number }> {
  // The page's aliases (msg_id, sender, custom_group_code, ...) must not shadow the columns in WHERE.
  const runsDone = await timed(runs, async () => {
    const text = await chText(ch, `${sql.page}\nFORMAT JSONEachRow`, {}, { prefer_column_name_to_alias: 1 });
    const count = sql.count ? await chNumber(ch, sql.count.replace('count(*) AS n', 'count() AS n')) : undefined;
    return { rows: text.split('\n').filter(Boolean).length, count };
  });
  const last = runsDone[runsDone.length - 1]!.value;
  return { ...stats(runsDone.map((r) => r.ms)), rows: last.rows, ...(last.count !== undefined ? { count: last.count } : {}) };
}

async function measurePostgres(pgPool: Pool, sql: { page: string; count?: string }, runs: number): Promise<Stats & { rows: number; count?: number; error?: string }> {
  const ms: number[] = [];
  let rows = 0;
  let count: number | undefined;
  const c = await pgPool.connect();
  try {
    await c.query(`SET statement_timeout = '${PG_TIMEOUT_S}s'`);
    for (let i = 0; i < 1 + runs; i++) {
      const t = performance.now();
      try {
        const r = await c.query(sql.page);
        if (sql.count) count = Number((await c.query<{ n: string }>(sql.count)).rows[0]!.n);
        rows = r.rowCount ?? 0;
      } catch (err) {
        return { ...stats(ms), rows, error: (err as Error).message };
      }
      if (i >= 1) ms.push(performance.now() - t);
    }
  } finally {
    c.release();
  }
  return { ...stats(ms), rows, ...(count !== undefined ? { count } : {}) };
}

async function endpointsAnswer(service: Web, fx: Fixture): Promise<{ ok: boolean; status: number; body: string }> {
  try {
    const a = await httpListing(service, fx, 'opens', 'none', { name: '', http: {}, sql: '' });
    return { ok: a.status === 200, status: a.status, body: a.error ?? '' };
  } catch (err) {
    return { ok: false, status: 0, body: (err as Error).message };
  }
}

/**
 * The comparison's web process (BENCH_COMPARE_WITH): DIR/dist/runtime/web.js with the environment
 * of the service's own web process (the same databases and settings), on another port.
 */
async function startCompareWeb(service: Service, dir: string): Promise<Web & { child: ChildProcess }> {
  const script = join(dir, 'dist', 'runtime', 'web.js');
  if (!existsSync(script)) throw new Error(`${script} is missing: build that checkout first`);
  const env: NodeJS.ProcessEnv = {};
  for (const entry of readFileSync(`/proc/${service.webPid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  env.PORT = String(await freePort());
  delete env.INTERNAL_PORT;
  // The service's web may be a cluster worker of `npm start`: these would make the comparison's
  // web think it is one too, and die at start on the parent's IPC channel it does not have.
  for (const inherited of ['NODE_UNIQUE_ID', 'NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE']) delete env[inherited];
  const child = spawn(process.execPath, [script], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (!child.pid) throw new Error(`could not start ${script}`);
  return { url: `http://127.0.0.1:${env.PORT}`, webPid: child.pid, child };
}

async function stopCompareWeb(web: { child: ChildProcess }): Promise<void> {
  if (web.child.exitCode !== null) return;
  const exited = new Promise((resolve) => web.child.once('exit', resolve));
  web.child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
}

// ---------------------------------------------------------------- export

interface ExportRun {
  variant: string;
  status: number;
  rows: number;
  bytes: number;
  seconds: number;
  rows_per_s: number;
  first_byte_ms: number;
  rss_before_mib?: number;
  rss_peak_mib?: number;
  rss_after_mib?: number;
  error?: string;
}

/** The range of whole days, from the middle of the data, holding at least EXPORT_ROWS opens. */
async function exportRange(ch: ClickHouse, fx: Fixture): Promise<{ start: Date; end: Date; opens: number }> {
  const days = await chRows<{ d: string; n: string }>(
    ch,
    `SELECT toString(toDate(occurred_at)) AS d, count() AS n FROM mail_events FINAL
      WHERE instance_id = {i:UInt64} AND event_type = 'open' GROUP BY d ORDER BY d`,
    { i: fx.instanceId },
  );
  const start = Math.floor(days.length / 3);
  let sum = 0;
  let i = start;
  for (; i < days.length && sum < EXPORT_ROWS; i++) sum += Number(days[i]!.n);
  return { start: new Date(`${days[start]!.d}T00:00:00.000Z`), end: new Date(`${days[i - 1]!.d}T00:00:00.000Z`), opens: sum };
}

async function httpExport(service: Web, fx: Fixture, format: 'csv' | 'json', range: { start: Date; end: Date }, label = 'HTTP'): Promise<ExportRun> {
  const qs = new URLSearchParams({ group_by: 'none', format, start_date: day(range.start), end_date: day(range.end) });
  const samples: number[] = [];
  const before = memoryMiB(service.webPid)?.rss;
  const timer = setInterval(() => {
    const m = memoryMiB(service.webPid);
    if (m) samples.push(m.rss);
  }, RSS_SAMPLE_MS);
  const t = performance.now();
  try {
    const res = await fetch(`${service.url}/v1/activities/opens/export?${qs}`, { headers: { authorization: `Bearer ${fx.key}`, 'x-instance-slug': SLUG } });
    const firstByte = performance.now() - t;
    if (res.status !== 200) {
      const body = await res.text();
      return { variant: `${label} export ${format}`, status: res.status, rows: 0, bytes: 0, seconds: 0, rows_per_s: 0, first_byte_ms: round(firstByte), error: body.slice(0, 500) };
    }
    let rows = 0;
    let bytes = 0;
    if (format === 'csv') {
      const c = await countStream(res.body);
      rows = c.lines - 1; // the header (no cell of this data holds a newline)
      bytes = c.bytes;
    } else {
      // Rows of a JSON array: count the objects' mail_id keys as they stream past.
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const needle = Buffer.from('"mail_id"');
      let carry = Buffer.alloc(0);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
        const buf = Buffer.concat([carry, Buffer.from(value.buffer, value.byteOffset, value.byteLength)]);
        for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + needle.length)) rows++;
        carry = Buffer.from(buf.subarray(Math.max(0, buf.length - (needle.length - 1))));
      }
    }
    const seconds = (performance.now() - t) / 1000;
    const m = memoryMiB(service.webPid);
    if (m) samples.push(m.rss);
    return {
      variant: `${label} export ${format}`,
      status: res.status,
      rows,
      bytes,
      seconds: round(seconds, 2),
      rows_per_s: round(rows / seconds),
      first_byte_ms: round(firstByte),
      rss_before_mib: before,
      rss_peak_mib: samples.length ? Math.max(...samples) : undefined,
      rss_after_mib: m?.rss,
    };
  } finally {
    clearInterval(timer);
  }
}

function exportSelect(fx: Fixture, range: { start: Date; end: Date }): string {
  return `SELECT mail_id, msg_id, recipient AS \`to\`, sender, occurred_at AS opened_at, sent_at, custom_msg_id, custom_group_code
            FROM mail_events FINAL
           WHERE instance_id = ${fx.instanceId} AND event_type = 'open'
             AND occurred_at >= '${chTime(range.start)}' AND occurred_at < '${chTime(addDays(range.end, 1))}'
           ORDER BY occurred_at DESC, event_id DESC`;
}

async function rawExport(ch: ClickHouse, fx: Fixture, range: { start: Date; end: Date }): Promise<ExportRun> {
  const t = performance.now();
  const res = await clickHouseFetch(chUrl(ch), { method: 'POST', body: `${exportSelect(fx, range)} FORMAT CSVWithNames` });
  const firstByte = performance.now() - t;
  if (!res.ok) return { variant: 'ClickHouse FORMAT CSVWithNames', status: res.status, rows: 0, bytes: 0, seconds: 0, rows_per_s: 0, first_byte_ms: round(firstByte), error: (await res.text()).slice(0, 500) };
  const c = await countStream(res.body);
  const seconds = (performance.now() - t) / 1000;
  return { variant: 'ClickHouse FORMAT CSVWithNames', status: res.status, rows: c.lines - 1, bytes: c.bytes, seconds: round(seconds, 2), rows_per_s: round((c.lines - 1) / seconds), first_byte_ms: round(firstByte) };
}

// ---------------------------------------------------------------- report

interface Meta {
  date: string;
  nproc: number;
  cpu: string;
  node: string;
  clickhouse: string;
  postgres: string;
  loadBefore: number;
  loadAfter: number;
}

/**
 * Whether two webs answered the same bodies. A grouped row's any() may pick another of its
 * events' values from one run to the next (custom_msg_id of a message's mails, say), so one web
 * can give several bodies: they agree when they share one.
 */
function sameBodies(a: string[], b: string[]): string {
  if (!a.some((d) => b.includes(d))) return '**no**';
  return a.length === 1 && b.length === 1 ? 'yes' : `yes (${a.length} and ${b.length} distinct bodies, one shared)`;
}

function markdown(meta: Meta, fx: Fixture, load: Load, pgLoad: PgLoad | undefined, cells: Cell[], exports: ExportRun[], exportInfo: { start: Date; end: Date; opens: number }, cpu: Record<string, CpuCores>, endpoints: { ok: boolean; status: number }): string {
  const L: string[] = [];
  L.push(`## bench/analytics (${meta.date})`, '');
  L.push(
    `${meta.nproc} cores (${meta.cpu}), Node ${meta.node}, ClickHouse ${meta.clickhouse}, Postgres ${meta.postgres}; busy cores before start ${meta.loadBefore}, after the runs ${meta.loadAfter}.`,
    `Instance ${fx.instanceId}: ${fmt(load.instance_events)} events (${fmt(load.instance_opens)} opens, ${fmt(load.instance_clicks)} clicks) of ${fmt(load.mirror_mails)} mails, ` +
      `${fmt(MESSAGES)} messages, ${day(fx.from)}..${day(addDays(fx.to, -1))}; noise ${fmt(load.noise_events)} events of ${NOISE_INSTANCES} other instances. ` +
      `Loaded in ${load.events_s} s + ${load.noise_s} s (noise) + ${load.mirror_s} s (mirror); merges settled after ${load.merges_wait_s} s; ` +
      `active parts and size on disk: ${TABLES.map((table) => `${table} ${load.parts_active[table]}, ${fmt((load.bytes_on_disk[table] ?? 0) / 2 ** 20)} MiB`).join('; ')}.`,
  );
  if (pgLoad) {
    L.push(
      `Postgres bench_events: ${fmt(pgLoad.rows)} rows, ${fmt(pgLoad.table_mib)} MiB + ${fmt(pgLoad.indexes_mib)} MiB of indexes; COPY ${pgLoad.copy_events_s} s, indexes ${pgLoad.index_s} s, VACUUM ANALYZE ${pgLoad.vacuum_analyze_s} s. ` +
        `Indexes: ${pgLoad.indexes.map((s) => '`' + s.replace(/^CREATE INDEX \w+ ON |^ALTER TABLE /, '') + '`').join(', ')}.`,
    );
  }
  L.push('');
  if (!endpoints.ok) L.push(`**The activity endpoints did not answer 200 (last status ${endpoints.status}): HTTP columns are empty.**`, '');
  L.push(
    `Listings: page 1, page_size ${PAGE_SIZE}, ${DAYS} days; up to ${ITERATIONS} sequential requests per cell (at least ${MIN_RUNS}, stopping after ${CELL_BUDGET_S} s) after 1-${WARMUPS} warm-ups (HTTP and ClickHouse direct), ${PG_ITERATIONS} after 1 (Postgres). ms.` +
      (cells.some((c) => c.compare) ? ` Comparison: the web of ${COMPARE_WITH}, its requests alternated with these, up to ${2 * CELL_BUDGET_S} s a cell for both.` : ''),
    '',
  );
  // With BENCH_COMPARE_WITH: the comparison's web, measured alternately with this one's.
  const compared = cells.some((c) => c.compare);
  L.push(
    `| listing | group_by | filter | HTTP p50 / p95 / max | rows, has_more, total_items |${compared ? ' comparison HTTP p50 / p95 / max | same response bodies |' : ''} ClickHouse direct p50 / p95 | Postgres p50 / p95 | Postgres ÷ HTTP (p50) | p95 < 150 ms |`,
    `|---|---|---|---|---|${compared ? '---|---|' : ''}---|---|---:|---|`,
  );
  const latency = (h: HttpStats | undefined) =>
    h ? (h.error ? `error ${Object.keys(h.statuses).join(',')}` : `${fmt(h.p50, 1)} / ${fmt(h.p95, 1)} / ${fmt(h.max, 1)}`) : '—';
  for (const c of cells) {
    const h = c.http;
    const httpCol = latency(h);
    const o = c.compare;
    const compareCols = compared
      ? ` ${latency(o)} | ${h && o && !h.error && !o.error ? sameBodies(h.digests, o.digests) : '—'} |`
      : '';
    const shape = h && !h.error ? `${h.rows}, ${h.has_more}, ${h.total_items ?? 'null'}` : '—';
    const pgCol = c.postgres ? (c.postgres.error ? `error: ${c.postgres.error.slice(0, 60)}` : `${fmt(c.postgres.p50)} / ${fmt(c.postgres.p95)}`) : '—';
    const ratio = c.postgres && !c.postgres.error && h && !h.error ? `${fmt(c.postgres.p50 / h.p50, 1)}×` : '—';
    const ok = h && !h.error ? (h.p95 < TARGET_P95_MS ? 'yes' : '**no**') : '—';
    L.push(`| ${c.kind} | ${c.group_by} | ${c.filter} | ${httpCol} | ${shape} |${compareCols} ${fmt(c.clickhouse.p50, 1)} / ${fmt(c.clickhouse.p95, 1)} | ${pgCol} | ${ratio} | ${ok} |`);
  }
  L.push('', `Export: opens, group_by none, ${day(exportInfo.start)}..${day(exportInfo.end)} (${fmt(exportInfo.opens)} opens in ClickHouse).`, '');
  L.push('| variant | status | rows | MiB | s | rows/s | first byte, ms | web RSS before / peak / after, MiB |', '|---|---|---:|---:|---:|---:|---:|---|');
  for (const e of exports) {
    L.push(
      `| ${e.variant} | ${e.status} | ${fmt(e.rows)} | ${fmt(e.bytes / 2 ** 20, 1)} | ${e.seconds} | ${fmt(e.rows_per_s)} | ${e.first_byte_ms} | ` +
        (e.rss_peak_mib !== undefined ? `${e.rss_before_mib} / ${e.rss_peak_mib} / ${e.rss_after_mib}` : '—') +
        (e.error ? ` error: ${e.error.slice(0, 80)}` : '') +
        ' |',
    );
  }
  L.push('', '| phase | CPU cores web / Postgres / ClickHouse / bench / other |', '|---|---|');
  for (const [k, v] of Object.entries(cpu)) L.push(`| ${k} | ${v.web} / ${v.postgres} / ${v.clickhouse} / ${v.bench} / ${v.other} |`);

  // Targets.
  const grouped = cells.filter((c) => c.group_by !== 'none' && c.http && !c.http.error);
  const worstP95 = grouped.length ? Math.max(...grouped.map((c) => c.http!.p95)) : NaN;
  const ratios = cells.filter((c) => c.group_by !== 'none' && c.http && !c.http.error && c.postgres && !c.postgres.error).map((c) => c.postgres!.p50 / c.http!.p50);
  const raw = Math.max(0, ...exports.filter((e) => e.variant.startsWith('ClickHouse') && !e.error).map((e) => e.rows_per_s));
  const csv = Math.max(0, ...exports.filter((e) => e.variant === 'HTTP export csv' && !e.error).map((e) => e.rows_per_s));
  const rss = Math.max(0, ...exports.filter((e) => e.variant.startsWith('HTTP') && e.rss_peak_mib !== undefined).map((e) => e.rss_peak_mib!));
  L.push('', '| target | measured | |', '|---|---|---|');
  L.push(`| grouped listings p95 < ${TARGET_P95_MS} ms | worst ${fmt(worstP95, 1)} ms | ${grouped.length ? (worstP95 < TARGET_P95_MS ? 'met' : '**not met**') : 'not measured'} |`);
  L.push(`| ≥ ${TARGET_SPEEDUP}× faster than Postgres (grouped, p50) | ${ratios.length ? `${fmt(Math.min(...ratios), 1)}×–${fmt(Math.max(...ratios), 1)}×` : '—'} | ${ratios.length ? (Math.min(...ratios) >= TARGET_SPEEDUP ? 'met' : '**not met**') : 'not measured'} |`);
  L.push(`| export ≥ ${TARGET_EXPORT_SHARE * 100} % of ClickHouse CSV rows/s | ${fmt(csv)} / ${fmt(raw)} = ${raw ? fmt((csv / raw) * 100) : '—'} % | ${csv && raw ? (csv / raw >= TARGET_EXPORT_SHARE ? 'met' : '**not met**') : 'not measured'} |`);
  L.push(`| web RSS < ${TARGET_RSS_MIB} MB during export | peak ${fmt(rss, 1)} MiB | ${rss ? (rss < TARGET_RSS_MIB ? 'met' : '**not met**') : 'not measured'} |`);
  return L.join('\n') + '\n';
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  assertBuilt();
  let loadBefore = await machineLoad(3_000);
  for (const until = Date.now() + intEnv('BENCH_WAIT_IDLE', 0) * 1000; loadBefore > 0.3 && Date.now() < until; ) {
    log(`machine busy (${loadBefore} cores); waiting for it to be idle`);
    loadBefore = await machineLoad(5_000);
  }
  if (loadBefore > 0.2) log(`warning: the machine is already busy (${loadBefore} of ${cpus().length} cores) before the benchmark; figures will be low`);
  const service = await startService({ prefix: 'cartero-bench-analytics-' });
  let pool: Pool | undefined;
  let stopped: Stopped | undefined;
  let compare: (Web & { child: ChildProcess }) | undefined;
  try {
    const services = readServices(service.dataDir);
    if (!services.postgres?.url || !services.clickhouse?.url) throw new Error(`no embedded Postgres or ClickHouse recorded in ${service.dataDir}/services.json`);
    pool = createPool(services.postgres.url, { max: 2, application: 'cartero-bench' });
    const chRoot = new URL(services.clickhouse.url);
    chRoot.pathname = '/';
    const ch: ClickHouse = { root: chRoot.toString(), database: databaseOf(services.clickhouse.url) };

    const fx = await seed(pool);
    log(`seeded instance ${SLUG} (${fx.instanceId}), ${fx.senders.length} senders, a mail:read key; data ${day(fx.from)}..${day(addDays(fx.to, -1))}`);
    const cpu: Record<string, CpuCores> = {};
    let c0 = cpuSnapshot(service);
    const load = await loadClickHouse(ch, fx);
    const shards = services.clickhouse_shards ?? [];
    if (shards.length > 1) {
      load.rows_by_shard = [];
      for (const shard of shards) {
        const root = new URL(shard.url);
        root.pathname = '/';
        load.rows_by_shard.push(await chNumber({ root: root.toString(), database: databaseOf(shard.url) }, 'SELECT count() AS n FROM mail_events_local'));
      }
    }
    cpu['ClickHouse load'] = coresUsed(c0, cpuSnapshot(service));
    log(`ClickHouse load: ${JSON.stringify(load)}`);
    let pgLoad: PgLoad | undefined;
    if (POSTGRES && PARTS.has('listings')) {
      c0 = cpuSnapshot(service);
      pgLoad = await loadPostgres(services.postgres.url, ch, fx);
      cpu['Postgres load'] = coresUsed(c0, cpuSnapshot(service));
      if (pgLoad.rows !== load.instance_events + (await chNumber(ch, "SELECT count() AS n FROM mail_events FINAL WHERE instance_id != {i:UInt64} AND event_type IN ('open', 'click')", { i: fx.instanceId }))) {
        log('warning: Postgres holds a different number of events than ClickHouse');
      }
    }

    // The endpoints are written by others in parallel; measure them if they answer.
    let endpoints = await endpointsAnswer(service, fx);
    for (const until = Date.now() + WAIT_ENDPOINTS_S * 1000; !endpoints.ok && endpoints.status === 404 && Date.now() < until; ) {
      log(`GET /v1/activities/opens answers ${endpoints.status}; waiting for the endpoints`);
      await sleep(30_000);
      endpoints = await endpointsAnswer(service, fx);
    }
    log(endpoints.ok ? 'activity endpoints answer 200' : `activity endpoints answer ${endpoints.status} (${endpoints.body.slice(0, 200)}): measuring ClickHouse direct and Postgres only`);
    if (COMPARE_WITH && endpoints.ok) {
      compare = await startCompareWeb(service, COMPARE_WITH);
      let answer = { ok: false, status: 0, body: '' };
      for (const until = Date.now() + 60_000; !answer.ok && Date.now() < until; await sleep(500)) answer = await endpointsAnswer(compare, fx);
      if (!answer.ok) throw new Error(`the comparison's web (${COMPARE_WITH}) does not answer: ${answer.status} ${answer.body.slice(0, 200)}`);
      log(`comparison web of ${COMPARE_WITH} answers on ${compare.url}`);
    }
    const machineBefore = await machineLoad(2_000);

    const cells: Cell[] = [];
    const filters = filtersOf(fx);
    c0 = cpuSnapshot(service);
    let httpMs = 0;
    for (const kind of PARTS.has('listings') ? (['opens', 'clicks'] as const) : []) {
      for (const groupBy of ['none', 'mail_id', 'msg_id'] as const) {
        for (const filter of filters) {
          const cell: Cell = { kind, group_by: groupBy, filter: filter.name, clickhouse: await measureClickHouse(ch, listingSql('ch', kind, groupBy, fx, filter), ITERATIONS) };
          if (endpoints.ok) {
            const t = performance.now();
            const call = (web: Web) => () => httpListing(web, fx, kind, groupBy, filter);
            const first = await call(service)();
            if (first.status !== 200) cell.http = httpStats([first]);
            else if (!compare) cell.http = httpStats((await timed(ITERATIONS, call(service))).map((r) => r.value));
            else {
              const [mine, theirs] = await timedPair(ITERATIONS, call(service), call(compare));
              cell.http = httpStats(mine);
              cell.compare = httpStats(theirs);
            }
            httpMs += performance.now() - t;
          }
          log(
            `${kind} group_by=${groupBy} ${filter.name}: HTTP ${cell.http ? `p50 ${cell.http.p50} p95 ${cell.http.p95} ms (${cell.http.rows} rows, has_more ${cell.http.has_more}, total ${cell.http.total_items})${cell.http.error ? ` ERROR ${JSON.stringify(cell.http.statuses)} ${cell.http.error.slice(0, 300)}` : ''}` : '—'}; ` +
              (cell.compare ? `comparison HTTP p50 ${cell.compare.p50} p95 ${cell.compare.p95} ms (${cell.compare.rows} rows, total ${cell.compare.total_items})${cell.compare.error ? ` ERROR ${cell.compare.error.slice(0, 300)}` : ''}; ` : '') +
              `ClickHouse direct p50 ${cell.clickhouse.p50} p95 ${cell.clickhouse.p95} ms (${cell.clickhouse.rows} rows${cell.clickhouse.count !== undefined ? `, count ${cell.clickhouse.count}` : ''})`,
          );
          cells.push(cell);
        }
      }
    }
    cpu['listings (HTTP + ClickHouse direct)'] = coresUsed(c0, cpuSnapshot(service));

    // Sanity: the HTTP total_items of opens/none equals the events ClickHouse holds in range.
    const checks: Record<string, unknown> = {};
    for (const c of cells.filter((c) => c.group_by === 'none' && c.http && !c.http.error && c.http.total_items !== null)) {
      checks[`${c.kind} none ${c.filter}: total_items vs ClickHouse count`] = `${c.http!.total_items} vs ${c.clickhouse.count}`;
    }

    if (POSTGRES && PARTS.has('listings')) {
      c0 = cpuSnapshot(service);
      for (const cell of cells) {
        // Grouped cells without filter and with sender_id, and the ungrouped page without filter.
        const wanted = cell.group_by === 'none' ? cell.filter === 'no filter' : cell.filter === 'no filter' || cell.filter.startsWith('sender_id');
        if (!wanted) continue;
        const filter = filters.find((f) => f.name === cell.filter)!;
        cell.postgres = await measurePostgres(pool, listingSql('pg', cell.kind, cell.group_by, fx, filter), PG_ITERATIONS);
        log(`Postgres ${cell.kind} group_by=${cell.group_by} ${cell.filter}: p50 ${cell.postgres.p50} p95 ${cell.postgres.p95} ms (${cell.postgres.rows} rows${cell.postgres.count !== undefined ? `, count ${cell.postgres.count}` : ''})${cell.postgres.error ? ` ERROR ${cell.postgres.error}` : ''}`);
      }
      cpu['Postgres comparison'] = coresUsed(c0, cpuSnapshot(service));
    }

    // Export of ≈ 1 M rows: the service's CSV (and JSON), then ClickHouse's own CSV, alternating.
    const range = await exportRange(ch, fx);
    log(`export range ${day(range.start)}..${day(range.end)}: ${range.opens} opens`);
    const exports: ExportRun[] = [];
    c0 = cpuSnapshot(service);
    for (let r = 0; r < (PARTS.has('exports') ? EXPORT_RUNS : 0); r++) {
      exports.push(await rawExport(ch, fx, range));
      if (endpoints.ok) {
        exports.push(await httpExport(service, fx, 'csv', range));
        exports.push(await httpExport(service, fx, 'json', range));
        if (compare) exports.push(await httpExport(compare, fx, 'csv', range, 'comparison HTTP'));
      }
      for (const e of exports.slice(endpoints.ok ? (compare ? -4 : -3) : -1)) {
        log(`${e.variant}: ${e.status}, ${e.rows} rows, ${fmt(e.bytes / 2 ** 20, 1)} MiB in ${e.seconds} s = ${e.rows_per_s} rows/s, first byte ${e.first_byte_ms} ms` +
          (e.rss_peak_mib !== undefined ? `; web RSS ${e.rss_before_mib} -> peak ${e.rss_peak_mib} -> ${e.rss_after_mib} MiB` : '') + (e.error ? ` ERROR ${e.error}` : ''));
      }
    }
    cpu['exports'] = coresUsed(c0, cpuSnapshot(service));

    // Issue 40: the providers listing over a 10 M-mail mirror of its own instance, loaded only now
    // so that the listings and exports above read the same tables as before it.
    let providers: { load: ProvidersLoad; cells: ProviderCell[]; sample: unknown; machine: { before: number; after: number; loadavg: string } } | undefined;
    if (PARTS.has('providers')) {
      const pfx = await seedProviders(pool, fx.from, fx.to);
      c0 = cpuSnapshot(service);
      const pload = await loadProviders(ch, pfx);
      cpu['providers load'] = coresUsed(c0, cpuSnapshot(service));
      log(`providers load: ${JSON.stringify(pload)}`);
      const client = createClickHouseClient(services.clickhouse.url, undefined, { requestTimeoutMs: 600_000 });
      try {
        const before = await machineLoad(2_000);
        c0 = cpuSnapshot(service);
        const measured = await measureProviders(ch, client, service, pfx);
        cpu['providers cells'] = coresUsed(c0, cpuSnapshot(service));
        providers = { load: pload, ...measured, machine: { before, after: await machineLoad(2_000), loadavg: loadavg() } };
      } finally {
        await client.close();
      }
    }
    const explain = await chText(ch, `EXPLAIN indexes = 1 ${listingSql('ch', 'opens', 'mail_id', fx, filters[0]!).page}`, {}, { prefer_column_name_to_alias: 1 });
    const loadAfter = await machineLoad(2_000);
    if (intEnv('BENCH_HOLD_S', 0)) {
      log(`holding the service ${intEnv('BENCH_HOLD_S', 0)} s: ClickHouse ${services.clickhouse.url}, web ${service.url}`);
      await sleep(intEnv('BENCH_HOLD_S', 0) * 1000);
    }

    const meta: Meta = {
      date: new Date().toISOString(),
      nproc: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      clickhouse: (await chText(ch, 'SELECT version()')).trim(),
      postgres: (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v,
      loadBefore,
      loadAfter,
    };
    if (compare) await stopCompareWeb(compare);
    await pool.end();
    pool = undefined;
    stopped = await stopService(service);

    const summary = {
      benchmark: 'activity analytics: listings and exports over HTTP from ClickHouse, against Postgres and raw ClickHouse (issue 5)',
      ...meta,
      machine_busy_before_listings: machineBefore,
      setup: {
        command: 'npx tsc -p tsconfig.json && node dist/bench/analytics.js',
        events: EVENTS,
        mails: MAILS,
        messages: MESSAGES,
        noise_share: NOISE_SHARE,
        open_share: OPEN_SHARE,
        iterations: ITERATIONS,
        pg_iterations: PG_ITERATIONS,
        page_size: PAGE_SIZE,
        range: [day(fx.from), day(addDays(fx.to, -1))],
        compare_with: COMPARE_WITH ?? null,
      },
      targets: { grouped_p95_ms: TARGET_P95_MS, speedup_vs_postgres: TARGET_SPEEDUP, export_share_of_raw: TARGET_EXPORT_SHARE, web_rss_mib: TARGET_RSS_MIB },
      endpoints,
      load,
      postgres_load: pgLoad ?? null,
      cells,
      export_range: { start: day(range.start), end: day(range.end), opens: range.opens },
      exports,
      providers: providers ? { mails: PROVIDER_MAILS, load: providers.load, cells: providers.cells, machine: providers.machine } : null,
      cpu,
      checks,
      stop: stopped,
    };
    process.stdout.write(markdown(meta, fx, load, pgLoad, cells, exports, range, cpu, endpoints));
    if (providers) process.stdout.write(providersMarkdown(providers.load, providers.cells, providers.sample, providers.machine));
    process.stdout.write('\nClickHouse EXPLAIN indexes=1 of the opens group_by=mail_id page (no filter):\n```\n' + explain + '```\n');
    process.stdout.write('\n```json\n' + JSON.stringify(summary, null, 2) + '\n```\n');
    checkStopped(service, stopped);
    log(`HTTP listing time in total: ${round(httpMs / 1000, 1)} s`);
  } finally {
    await cleanUp(service, stopped, [() => pool?.end(), () => (compare ? stopCompareWeb(compare) : undefined)]);
  }
}

runBench(main);
