/**
 * Benchmark (issue 39): DMARC aggregate reports, received and read.
 *
 *   npx tsc -p tsconfig.json && npm run bench:dmarc
 *
 * The service is started the way a user starts it (`node dist/runtime/start.js`: embedded Postgres
 * and ClickHouse, fresh DATA_DIR); everything is loaded over loopback from this process.
 *
 * Part 1, the listener. Report mails as the big providers send them (bench/dmarc-reports.ts: ~5
 * records each, Google's zipped, the others' gzipped, one reporter and one report id each) go
 * to dmarc@bounces.<domain> at the worker's inbound listener (INBOUND_SMTP_PORT; its per-address
 * rate and per-connection limits raised so the load generator is not throttled). At each of
 * BENCH_CONNECTIONS (kept connections, one message at a time each) for BENCH_DURATION seconds or
 * BENCH_REPORTS reports, whichever ends first: reports/s and the reply time (MAIL FROM to the
 * reply after DATA; the listener replies once the report is committed in Postgres). The worker's
 * DMARC shipper runs meanwhile, as in production; then the time until every report is in
 * ClickHouse. Compared in the same run: DSN bounces (the mixed bounce corpus of bench/bounces.ts
 * to seeded mails' VERP addresses) through the same listener at 4 connections for the same time.
 * Then BENCH_BIG_REPORTS reports of 10,000 records each (.xml.gz, Google's layout), one at a time
 * on a quiet listener: the reply time, and the time until the report and its records are in
 * ClickHouse (shipped).
 *
 * Part 2, the listings. A year (365 daily reports) from 5 reporters for 50 domains is written into
 * ClickHouse by the shipper's own insert (analytics/dmarc/insert.ts: 91,250 reports, ~5 records
 * each, Cartero's IPs signed by the domain's Cartero selector), then merged (OPTIMIZE ... FINAL,
 * as a year of background merges leaves it; BENCH_OPTIMIZE=0 skips it). GET
 * /v1/domains/{d}/dmarc-sources and /dmarc-reports (first page, default page size), rotating
 * over the 50 domains, with a year, a month (30 days) and a week ending yesterday, measured with
 * autocannon at each of BENCH_HTTP_CONNECTIONS for BENCH_HTTP_DURATION seconds: p50/p95/p99 (every
 * response's time) and req/s. Compared in the same run: GET /v1/domains/{d}/status (the same key
 * check and domain lookup the listings start with, no ClickHouse) and GET /healthz.
 *
 * Environment (all optional): BENCH_DURATION (default 10), BENCH_CONNECTIONS (default "1,4,16"),
 * BENCH_REPORTS (per concurrency, default 3000), BENCH_BIG_REPORTS (default 2), BENCH_BIG_RECORDS
 * (default 10000), BENCH_HTTP_CONNECTIONS (default "1,10"), BENCH_HTTP_DURATION (default 6),
 * BENCH_DOMAINS (default 50), BENCH_DAYS (default 365), BENCH_OPTIMIZE (default 1),
 * BENCH_PARTS ("listener,listings": run one part only), BENCH_KEEP_DATA=1.
 *
 * The service, its databases and this load generator share the machine's cores: the figures are
 * a lower bound for the service alone. The report mails are unsigned (reporter_authenticated
 * false): a signed one costs a DNS lookup of the reporter's key, which this loopback-only bench
 * does not make.
 */
import autocannonUntyped from 'autocannon';
import nodemailer, { type Transporter } from 'nodemailer';
import { createClickHouseClient, type ClickHouseClient } from '../analytics/client.js';
import { insertDmarcReports } from '../analytics/dmarc/insert.js';
import { dmarcWhere } from '../analytics/dmarc/range.js';
import { listDmarcSources } from '../analytics/dmarc/sources.js';
import { readServices } from '../config/services-file.js';
import type { UnshippedReport } from '../domain/dmarc/ship.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { reportCounts } from '../engines/dmarc/report.js';
import type { Pool } from '../sql/pool.js';
import { loadBounceCorpus, sampleBytes } from '../test/helpers/bounce-corpus.js';
import { smtpDeliver } from '../test/helpers/smtp-deliver.js';
import { bigReport, dayReport, REPORTERS, reportMail, reportXml, type DayReport } from './dmarc-reports.js';
import { rng } from './random.js';
import { benchTenant, sentMails, verifiedDomain } from './fixtures.js';
import { latencyStats, loadavg, machineLoad, percentile, round, sleep } from './proc.js';
import { assertBuilt, benchService, coresByPart, cpuSnapshot, loadBeforeStart, machineInfo, roundedCores, runBench, startService, type CpuSnapshot, type Service } from './service.js';

const list = (v: string | undefined, d: string) => (v ?? d).split(',').map(Number).filter((n) => n > 0);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = list(process.env.BENCH_CONNECTIONS, '1,4,16');
const REPORTS = Number(process.env.BENCH_REPORTS ?? 3000);
const BIG_REPORTS = Number(process.env.BENCH_BIG_REPORTS ?? 2);
const BIG_RECORDS = Number(process.env.BENCH_BIG_RECORDS ?? 10_000);
const HTTP_CONNECTIONS = list(process.env.BENCH_HTTP_CONNECTIONS, '1,10');
const HTTP_DURATION = Number(process.env.BENCH_HTTP_DURATION ?? 6);
const DOMAINS = Number(process.env.BENCH_DOMAINS ?? 50);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const OPTIMIZE = process.env.BENCH_OPTIMIZE !== '0';
const PARTS = new Set((process.env.BENCH_PARTS ?? 'listener,listings').split(','));
const DSN_CONNECTIONS = 4;
const LISTENER_DOMAINS = 10;
const DSN_MAILS = 5000;
const SLUG = 'bench-dmarc';
const SHIP_WAIT_S = 180;

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const DAY_S = 86_400;
/** Midnight UTC today, Unix seconds: the reports' days end yesterday. */
const TODAY = Math.floor(Date.now() / 1000 / DAY_S) * DAY_S;
const ymd = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10);

// ---------------------------------------------------------------- autocannon (the part used here)

// bench/autocannon.d.ts types the plain-URL use; this bench varies the path per request and reads
// every response's time (autocannon's histogram has no p95).
interface RequestData {
  path?: string;
}
interface Cannon extends Promise<{ requests: { total: number }; errors: number; timeouts: number; non2xx: number; statusCodeStats: Record<string, { count: number }> }> {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
const autocannon = autocannonUntyped as unknown as (opts: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
  requests?: Array<{ setupRequest: (req: RequestData) => RequestData }>;
}) => Cannon;

// ---------------------------------------------------------------- accounting

interface Cores {
  worker: number;
  web: number;
  postgres: number;
  clickhouse: number;
  bench: number;
  /** Machine busy minus the above (kernel network work, other sessions on the machine). */
  other: number;
}
function coresOf(a: CpuSnapshot, b: CpuSnapshot): Cores {
  const cores = coresByPart(a, b);
  return { ...roundedCores(cores, ['worker', 'web', 'postgres', 'clickhouse', 'bench']), other: round(Math.max(0, cores.machine.busy - cores.ours), 2) };
}

interface Latency {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}
function latency(ms: number[]): Latency {
  return latencyStats(ms, [50, 95, 99]);
}

// ---------------------------------------------------------------- part 1: the listener

interface SmtpRun extends Latency {
  what: string;
  connections: number;
  seconds: number;
  per_s: number;
  replies: Record<string, number>;
  cores: Cores;
  /** CPU milliseconds per message of the worker (listener + shipper) and of Postgres. */
  cpu_ms_per_message: { worker: number; postgres: number };
}

/** `connections` kept SMTP connections, one message at a time each, until `seconds` pass or `count` messages are sent. */
async function smtpLoad(service: Service, port: number, what: string, connections: number, seconds: number, count: number, message: (i: number) => { to: string; raw: Buffer }): Promise<SmtpRun> {
  const transports: Transporter[] = [];
  const latencies: number[] = [];
  const replies: Record<string, number> = {};
  let next = 0;
  await sleep(500);
  const cpu0 = cpuSnapshot(service);
  const started = performance.now();
  const until = started + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity });
        transports.push(transport);
        for (let i = next++; i < count && performance.now() < until; i = next++) {
          const { to, raw } = message(i);
          const t0 = performance.now();
          let reply: string;
          try {
            reply = (await transport.sendMail({ envelope: { from: '', to: [to] }, raw })).response;
          } catch (err) {
            reply = (err as { response?: string; message: string }).response ?? (err as Error).message;
          }
          latencies.push(performance.now() - t0);
          // "250 2.0.0 Ok: 1 DMARC report(s) stored" -> "250 stored"; DSNs: the code.
          const key = `${reply.slice(0, 3)}${/report\(s\) stored/.test(reply) ? ' stored' : /already stored/.test(reply) ? ' already stored' : /no report read/.test(reply) ? ' no report read' : ''}`;
          replies[key] = (replies[key] ?? 0) + 1;
        }
      }),
    );
  } finally {
    for (const t of transports) t.close();
  }
  const secs = (performance.now() - started) / 1000;
  const cpu1 = cpuSnapshot(service);
  const n = latencies.length;
  const run: SmtpRun = {
    what,
    connections,
    seconds: round(secs, 1),
    per_s: round(n / secs, 1),
    ...latency(latencies),
    replies,
    cores: coresOf(cpu0, cpu1),
    cpu_ms_per_message: { worker: round(((cpu1.worker - cpu0.worker) * 1000) / n, 2), postgres: round(((cpu1.postgres - cpu0.postgres) * 1000) / n, 2) },
  };
  log(`${what} c=${connections}: ${run.n} in ${run.seconds} s = ${run.per_s}/s, p50 ${run.p50} p95 ${run.p95} p99 ${run.p99} ms; replies ${JSON.stringify(replies)}; cores ${JSON.stringify(run.cores)}`);
  return run;
}

async function unshipped(pool: Pool): Promise<number> {
  return Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM dmarc_reports WHERE shipped_at IS NULL`)).rows[0]!.n);
}

async function chQuery<T>(ch: ClickHouseClient, query: string, query_params: Record<string, unknown> = {}): Promise<T[]> {
  return (await (await ch.query({ query, query_params, format: 'JSONEachRow' })).json()) as T[];
}

interface BigRun {
  records: number;
  messages: number;
  mail_bytes: number;
  xml_bytes: number;
  reply: string;
  reply_ms: number;
  /** From the start of the delivery until the report row is visible in ClickHouse. */
  in_clickhouse_ms: number;
  /** The same, counted from the 250. */
  after_reply_ms: number;
  records_in_clickhouse: number;
}

async function listener(service: Service, pool: Pool, ch: ClickHouseClient, tenant: Tenant, domains: Array<{ name: string; selector: string }>, port: number) {
  const r = rng(39);
  let n = 0;
  const makeMails = async (count: number) => {
    const mails: Array<{ to: string; raw: Buffer }> = [];
    for (let i = 0; i < count; i++, n++) {
      const d = domains[n % domains.length]!;
      const rep = dayReport(r, REPORTERS[n % REPORTERS.length]!, d.name, n % domains.length, d.selector, TODAY - DAY_S * (1 + (Math.floor(n / 50) % 365)), n);
      mails.push({ to: `dmarc@bounces.${d.name}`, raw: await reportMail(rep, `dmarc@bounces.${d.name}`) });
    }
    return mails;
  };

  const runs: SmtpRun[] = [];
  let sizes: number[] = [];
  for (const c of CONNECTIONS) {
    const t = performance.now();
    const mails = await makeMails(REPORTS);
    sizes = sizes.concat(mails.slice(0, 200).map((m) => m.raw.length));
    log(`built ${mails.length} report mails in ${round((performance.now() - t) / 1000, 1)} s`);
    runs.push(await smtpLoad(service, port, 'DMARC reports', c, DURATION, mails.length, (i) => mails[i]!));
  }
  const lastEnd = performance.now();
  const backlog = await unshipped(pool);
  while ((await unshipped(pool)) > 0) {
    if (performance.now() - lastEnd > SHIP_WAIT_S * 1000) throw new Error(`DMARC reports still unshipped ${SHIP_WAIT_S} s after the last delivery`);
    await sleep(100);
  }
  const drainS = round((performance.now() - lastEnd) / 1000, 1);
  const storedReplies = runs.reduce((s, x) => s + (x.replies['250 stored'] ?? 0), 0);
  const [inCh] = await chQuery<{ n: string; records: string }>(
    ch,
    `SELECT count() AS n, sum(record_count) AS records FROM dmarc_reports FINAL WHERE instance_id = {i:UInt64} AND domain IN {d:Array(String)}`,
    { i: tenant.instanceId, d: domains.map((d) => d.name) },
  );
  log(`shipper: ${backlog} reports unshipped at the end of the last run, all in ClickHouse ${drainS} s later; ClickHouse holds ${inCh?.n} reports (${storedReplies} stored replies)`);

  // The same listener's bounce throughput, in the same run (bench/bounces.ts's corpus and addresses).
  const corpus = loadBounceCorpus();
  const samples = corpus.samples.map((s) => sampleBytes(corpus, s));
  const bounceDomain = `bounces-${SLUG}.example`;
  await verifiedDomain(tenant, pool, bounceDomain);
  const verp = await sentMails(tenant, pool, bounceDomain, DSN_MAILS);
  const dsn = await smtpLoad(service, port, 'DSN bounces (mixed corpus)', DSN_CONNECTIONS, DURATION, Infinity, (i) => ({ to: verp[i % verp.length]!, raw: samples[i % samples.length]! }));

  // The 10,000-record reports, one at a time.
  const big: BigRun[] = [];
  const d = domains[0]!;
  for (let b = 0; b < BIG_REPORTS; b++) {
    await sleep(1_000);
    const rep: DayReport = bigReport(r, d.name, d.selector, TODAY - DAY_S * (1 + b), BIG_RECORDS, b);
    rep.reporter = { ...REPORTERS[1]!, org: 'google.com', email: 'noreply-dmarc-support@google.com', host: 'google.com' }; // Google's names, gzipped
    const raw = await reportMail(rep, `dmarc@bounces.${d.name}`);
    const xmlBytes = Buffer.byteLength(reportXml(rep.report));
    const t0 = performance.now();
    const reply = await smtpDeliver(port, `dmarc@bounces.${d.name}`, raw);
    const replied = performance.now();
    let seen = false;
    while (!seen) {
      if (performance.now() - replied > SHIP_WAIT_S * 1000) throw new Error(`the ${BIG_RECORDS}-record report is not in ClickHouse after ${SHIP_WAIT_S} s`);
      seen = (await chQuery(ch, `SELECT 1 FROM dmarc_reports WHERE instance_id = {i:UInt64} AND domain = {d:String} AND report_id = {r:String} LIMIT 1`, { i: tenant.instanceId, d: d.name, r: rep.report.reportId })).length > 0;
      if (!seen) await sleep(20);
    }
    const shipped = performance.now();
    const [rec] = await chQuery<{ n: string }>(
      ch,
      `SELECT count() AS n FROM dmarc_records FINAL WHERE instance_id = {i:UInt64} AND domain = {d:String}
          AND report_key = (SELECT any(report_key) FROM dmarc_reports WHERE instance_id = {i:UInt64} AND domain = {d:String} AND report_id = {r:String})`,
      { i: tenant.instanceId, d: d.name, r: rep.report.reportId },
    );
    const run: BigRun = {
      records: rep.report.records.length,
      messages: reportCounts(rep.report).messages,
      mail_bytes: raw.length,
      xml_bytes: xmlBytes,
      reply: reply.response,
      reply_ms: round(replied - t0, 1),
      in_clickhouse_ms: round(shipped - t0, 1),
      after_reply_ms: round(shipped - replied, 1),
      records_in_clickhouse: Number(rec?.n ?? 0),
    };
    log(`${BIG_RECORDS}-record report (${round(raw.length / 1024)} KiB mail, ${round(xmlBytes / 1048576, 1)} MiB XML): ${reply.response}; reply ${run.reply_ms} ms, in ClickHouse after ${run.in_clickhouse_ms} ms (${run.records_in_clickhouse} records)`);
    big.push(run);
  }
  sizes.sort((a, b) => a - b);
  return {
    report_mail_bytes_p50: percentile(sizes, 50),
    runs,
    shipper: { unshipped_after_last_run: backlog, all_in_clickhouse_after_s: drainS, reports_in_clickhouse: Number(inCh?.n ?? 0), stored_replies: storedReplies },
    dsn,
    big,
  };
}

// ---------------------------------------------------------------- part 2: the listings

async function seedYear(ch: ClickHouseClient, tenant: Tenant, domains: Array<{ name: string; selector: string }>) {
  const r = rng(2026);
  let key = 1_000_000_000;
  let reports = 0;
  let records = 0;
  const t0 = performance.now();
  for (const [k, d] of domains.entries()) {
    const batch: UnshippedReport[] = [];
    for (let day = 0; day < DAYS; day++) {
      const begin = TODAY - DAY_S * (DAYS - day);
      for (const [j, reporter] of REPORTERS.entries()) {
        const { report } = dayReport(r, reporter, d.name, k, d.selector, begin, key);
        const counts = reportCounts(report);
        batch.push({
          id: String(key++),
          instance_id: String(tenant.instanceId),
          domain: d.name,
          org_name: report.orgName,
          org_email: report.orgEmail,
          report_id: report.reportId,
          begin_at: new Date(report.begin * 1000),
          end_at: new Date(report.end * 1000),
          schema: report.schema,
          policy: report.policy,
          generator: report.generator,
          message_count: String(counts.messages),
          dmarc_pass_count: String(counts.passed),
          record_count: report.records.length,
          reporter_authenticated: j < 3,
          received_at: new Date((report.end + 3 * 3600) * 1000),
          records: report.records,
          selectors: [d.selector],
        });
        records += report.records.length;
      }
    }
    await insertDmarcReports(ch, batch);
    reports += batch.length;
  }
  const insertS = round((performance.now() - t0) / 1000, 1);
  const t1 = performance.now();
  if (OPTIMIZE) for (const table of ['dmarc_records', 'dmarc_reports']) await ch.command({ query: `OPTIMIZE TABLE ${table} FINAL`, clickhouse_settings: { optimize_throw_if_noop: 0 } });
  const optimizeS = round((performance.now() - t1) / 1000, 1);
  const [parts] = await chQuery<{ n: string }>(ch, `SELECT count() AS n FROM system.parts WHERE active AND database = currentDatabase() AND table = 'dmarc_records'`);
  log(`seeded ${reports} reports, ${records} records for ${domains.length} domains × ${DAYS} days in ${insertS} s; OPTIMIZE ${OPTIMIZE ? `${optimizeS} s` : 'skipped'}; ${parts?.n} active parts of dmarc_records`);
  return { reports, records, insert_s: insertS, optimize_s: OPTIMIZE ? optimizeS : null, active_parts_dmarc_records: Number(parts?.n ?? 0) };
}

/**
 * What ClickHouse reads for one domain's range (the listings' WHERE, analytics/dmarc/range.ts,
 * over dmarc_records FINAL): its X-ClickHouse-Summary (rows and bytes read), against the whole
 * table: does the sort key bound the read to the domain's range?
 */
interface ServerSide {
  rows_in_range: number;
  read_rows: number;
  read_kib: number;
  table_rows: number;
}
async function rangeRead(ch: ClickHouseClient, tenant: Tenant, domain: string, dates: { start_date: string; end_date: string }): Promise<ServerSide> {
  const where = dmarcWhere(tenant, domain, dates);
  const rs = await ch.query({ query: `SELECT count() AS n FROM dmarc_records FINAL WHERE ${where.sql}`, query_params: where.params, format: 'JSONEachRow' });
  const [row] = (await rs.json()) as Array<{ n: string }>;
  const summary = JSON.parse(String(rs.response_headers['x-clickhouse-summary'] ?? '{}')) as { read_rows?: string; read_bytes?: string };
  const [all] = await chQuery<{ n: string }>(ch, 'SELECT count() AS n FROM dmarc_records');
  return { rows_in_range: Number(row?.n ?? 0), read_rows: Number(summary.read_rows ?? NaN), read_kib: round(Number(summary.read_bytes ?? NaN) / 1024), table_rows: Number(all?.n ?? 0) };
}

interface HttpRun extends Latency {
  what: string;
  range: string;
  connections: number;
  seconds: number;
  req_per_s: number;
  statuses: Record<string, number>;
  errors: number;
  cores: Cores;
}

async function httpLoad(service: Service, headers: Record<string, string>, what: string, range: string, paths: string[], connections: number, seconds: number): Promise<HttpRun> {
  await sleep(500);
  let cursor = 0;
  const latencies: number[] = [];
  const cpu0 = cpuSnapshot(service);
  const t0 = performance.now();
  const cannon = autocannon({
    url: service.url + paths[0],
    connections,
    duration: seconds,
    headers,
    requests: [{ setupRequest: (req) => ((req.path = paths[cursor++ % paths.length]!), req) }],
  });
  cannon.on('response', (_c, _status, _bytes, ms) => latencies.push(ms));
  const res = await cannon;
  const secs = (performance.now() - t0) / 1000;
  const cpu1 = cpuSnapshot(service);
  const run: HttpRun = {
    what,
    range,
    connections,
    seconds: round(secs, 1),
    req_per_s: round(latencies.length / secs, 1),
    ...latency(latencies),
    statuses: Object.fromEntries(Object.entries(res.statusCodeStats).map(([k, v]) => [k, v.count])),
    errors: res.errors + res.timeouts,
    cores: coresOf(cpu0, cpu1),
  };
  log(`${what} ${range} c=${connections}: ${run.req_per_s} req/s, p50 ${run.p50} p95 ${run.p95} p99 ${run.p99} ms; statuses ${JSON.stringify(run.statuses)}, errors ${run.errors}; cores ${JSON.stringify(run.cores)}`);
  return run;
}

const RANGES = [
  { name: 'year', days: 365 },
  { name: 'month', days: 30 },
  { name: 'week', days: 7 },
] as const;

async function listings(service: Service, pool: Pool, ch: ClickHouseClient, tenant: Tenant, domains: Array<{ name: string; selector: string }>) {
  const seeded = await seedYear(ch, tenant, domains);
  const { key } = await createApiKey(pool, { instanceSlug: SLUG, scopes: ['domains:read'] });
  const headers = { authorization: `Bearer ${key}`, 'x-instance-slug': SLUG };
  const end = ymd(TODAY - DAY_S);
  const qs = (days: number) => `start_date=${ymd(TODAY - DAY_S * days)}&end_date=${end}`;

  // Warm-up and the answers' shape: every domain once per listing and range, checked.
  const shape: Record<string, { sources_total_items: [number, number]; reports_total_items: [number, number]; first_page_rows: number }> = {};
  for (const range of RANGES) {
    const totals = { sources: [] as number[], reports: [] as number[] };
    let rows = 0;
    for (const d of domains) {
      for (const listing of ['sources', 'reports'] as const) {
        const res = await fetch(`${service.url}/v1/domains/${d.name}/dmarc-${listing}?${qs(range.days)}`, { headers });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`GET dmarc-${listing} ${range.name} for ${d.name}: ${res.status} ${text.slice(0, 300)}`);
        const body = JSON.parse(text) as { data: unknown[]; pagination: { total_items: number | null } };
        if (!body.data.length) throw new Error(`GET dmarc-${listing} ${range.name} for ${d.name}: no rows`);
        totals[listing].push(body.pagination.total_items ?? NaN);
        if (listing === 'sources') rows = body.data.length;
      }
    }
    const minMax = (a: number[]) => [Math.min(...a), Math.max(...a)] as [number, number];
    shape[range.name] = { sources_total_items: minMax(totals.sources), reports_total_items: minMax(totals.reports), first_page_rows: rows };
    if (totals.reports.some((t) => t !== range.days * REPORTERS.length)) throw new Error(`dmarc-reports ${range.name}: total_items ${JSON.stringify(minMax(totals.reports))}, expected ${range.days * REPORTERS.length}`);
    log(`${range.name} (${qs(range.days)}): sources per domain ${shape[range.name]!.sources_total_items.join('–')}, reports ${range.days * REPORTERS.length}; first page ${rows} rows`);
  }

  // The sources query alone (analytics/dmarc/sources.ts, the page and its count), from this process, one at a time.
  const direct: Record<string, Latency> = {};
  const serverSide: Record<string, ServerSide> = {};
  for (const range of RANGES) {
    const ms: number[] = [];
    for (let pass = 0; pass < 2; pass++) {
      for (const d of domains) {
        const t = performance.now();
        await listDmarcSources(tenant, ch, d.name, { start_date: ymd(TODAY - DAY_S * range.days), end_date: end, page: 1, page_size: 20 });
        ms.push(performance.now() - t);
      }
    }
    direct[range.name] = latency(ms);
    serverSide[range.name] = await rangeRead(ch, tenant, domains[0]!.name, { start_date: ymd(TODAY - DAY_S * range.days), end_date: end });
    log(`sources query alone, ${range.name}: p50 ${direct[range.name]!.p50} p95 ${direct[range.name]!.p95} ms (${ms.length} calls, one at a time); in ClickHouse ${JSON.stringify(serverSide[range.name])}`);
  }

  const runs: HttpRun[] = [];
  for (const c of HTTP_CONNECTIONS) {
    for (const range of RANGES) {
      for (const listing of ['sources', 'reports'] as const) {
        runs.push(await httpLoad(service, headers, `GET dmarc-${listing}`, range.name, domains.map((d) => `/v1/domains/${d.name}/dmarc-${listing}?${qs(range.days)}`), c, HTTP_DURATION));
      }
    }
    runs.push(await httpLoad(service, headers, 'GET /v1/domains/{d}/status (reference)', '—', domains.map((d) => `/v1/domains/${d.name}/status`), c, HTTP_DURATION));
  }
  runs.push(await httpLoad(service, {}, 'GET /healthz (reference)', '—', ['/healthz'], Math.max(...HTTP_CONNECTIONS), HTTP_DURATION));
  return { seeded, range_end: end, shape, sources_query_alone: direct, sources_query_in_clickhouse: serverSide, runs };
}

// ---------------------------------------------------------------- report

function markdown(summary: Summary): string {
  const L: string[] = [];
  const m = summary.machine;
  L.push(`# bench/dmarc, ${summary.date}`, '', `${m.nproc} cores (${m.cpu_model}), Node ${m.node}; busy cores before start ${summary.busy_cores_before}, after the runs ${summary.busy_cores_after}; loadavg ${summary.loadavg_before} → ${summary.loadavg_after}.`, '');
  const l = summary.listener;
  if (l) {
    L.push(`## Listener: report mails (~5 records, zip/gzip; median mail ${l.report_mail_bytes_p50} bytes) and DSNs, ${DURATION} s per row`, '');
    L.push('| what | connections | messages | per second | reply p50 / p95 / p99 / max ms | replies | cores worker / postgres / clickhouse / bench / other | CPU ms per message worker / postgres |', '|---|---|---|---|---|---|---|---|');
    for (const r of [...l.runs, l.dsn]) {
      L.push(`| ${r.what} | ${r.connections} | ${r.n} | **${r.per_s}** | ${r.p50} / ${r.p95} / ${r.p99} / ${r.max} | ${Object.entries(r.replies).map(([k, v]) => `${k}: ${v}`).join(', ')} | ${r.cores.worker} / ${r.cores.postgres} / ${r.cores.clickhouse} / ${r.cores.bench} / ${r.cores.other} | ${r.cpu_ms_per_message.worker} / ${r.cpu_ms_per_message.postgres} |`);
    }
    L.push('', `Shipper: ${l.shipper.unshipped_after_last_run} reports not yet in ClickHouse when the last run ended, all of them ${l.shipper.all_in_clickhouse_after_s} s later; ClickHouse holds ${l.shipper.reports_in_clickhouse} reports for ${l.shipper.stored_replies} "stored" replies.`, '');
    L.push(`| ${BIG_RECORDS.toLocaleString('en')}-record report | mail | XML | reply | reply ms | in ClickHouse after (ms from the start) | after the 250 (ms) | records in ClickHouse |`, '|---|---|---|---|---|---|---|---|');
    l.big.forEach((b, i) => L.push(`| ${i + 1} | ${round(b.mail_bytes / 1024)} KiB | ${round(b.xml_bytes / 1048576, 1)} MiB | ${b.reply} | **${b.reply_ms}** | **${b.in_clickhouse_ms}** | ${b.after_reply_ms} | ${b.records_in_clickhouse} |`));
    L.push('');
  }
  const s = summary.listings;
  if (s) {
    L.push(`## Listings: ${s.seeded.reports.toLocaleString('en')} reports, ${s.seeded.records.toLocaleString('en')} records (${DOMAINS} domains × ${DAYS} days × ${REPORTERS.length} reporters), ranges ending ${s.range_end}, ${HTTP_DURATION} s per row`, '');
    L.push('| range | sources per domain (total_items) | reports per domain |', '|---|---|---|');
    for (const [k, v] of Object.entries(s.shape)) L.push(`| ${k} | ${v.sources_total_items.join('–')} | ${v.reports_total_items.join('–')} |`);
    L.push('', `The sources query alone (analytics/dmarc/sources.ts from this process, one call at a time, 2 × ${DOMAINS} calls), p50 / p95 ms: ${Object.entries(s.sources_query_alone).map(([k, v]) => `${k} ${v.p50} / ${v.p95}`).join('; ')}.`);
    L.push('', `Rows ClickHouse reads for one domain's range (dmarc_records FINAL, the listings' WHERE): ${Object.entries(s.sources_query_in_clickhouse).map(([k, v]) => `${k} ${v.read_rows.toLocaleString('en')} rows read for ${v.rows_in_range.toLocaleString('en')} in range`).join('; ')} (table: ${Object.values(s.sources_query_in_clickhouse)[0]?.table_rows.toLocaleString('en')} rows).`);
    L.push('', '| request | range | connections | req/s | p50 / p95 / p99 / max ms | statuses | cores web / clickhouse / postgres / bench / other |', '|---|---|---|---|---|---|---|');
    for (const r of s.runs) L.push(`| ${r.what} | ${r.range} | ${r.connections} | ${r.req_per_s} | ${r.p50} / **${r.p95}** / ${r.p99} / ${r.max} | ${Object.entries(r.statuses).map(([k, v]) => `${k}: ${v}`).join(', ')}${r.errors ? `, errors ${r.errors}` : ''} | ${r.cores.web} / ${r.cores.clickhouse} / ${r.cores.postgres} / ${r.cores.bench} / ${r.cores.other} |`);
    L.push('');
  }
  return L.join('\n') + '\n';
}

interface Summary {
  benchmark: string;
  date: string;
  command: string;
  machine: ReturnType<typeof machineInfo>;
  busy_cores_before: number;
  busy_cores_after: number;
  loadavg_before: string;
  loadavg_after: string;
  listener?: Awaited<ReturnType<typeof listener>>;
  listings?: Awaited<ReturnType<typeof listings>>;
  stop?: unknown;
}

async function main(): Promise<void> {
  assertBuilt();
  const startedAt = new Date().toISOString();
  const busyBefore = await loadBeforeStart();
  const loadavgBefore = loadavg();
  // Inherited by the service's worker: the load generator is one client address.
  process.env.INBOUND_RATE_PER_MINUTE = '100000000';
  process.env.INBOUND_MAX_MESSAGES_PER_CONNECTION = '100000000';
  const service = await startService({ prefix: 'cartero-bench-dmarc-' });
  let ch: ClickHouseClient | undefined;
  await benchService(service, 4, async (pool, stop) => {
    try {
      const services = readServices(service.dataDir);
      const inboundUrl = services.inbound_smtp?.url;
      const chUrl = services.clickhouse?.url;
      if (!inboundUrl || !chUrl) throw new Error(`no inbound listener or ClickHouse recorded in ${service.dataDir}/services.json`);
      ch = createClickHouseClient(chUrl);
      const tenant = await benchTenant(pool, SLUG, 'DMARC benchmark');
      const addDomains = async (names: string[]) => {
        for (const n of names) await verifiedDomain(tenant, pool, n);
        const { rows } = await pool.query<{ name: string; selector: string }>(
          `SELECT d.name, (SELECT k.selector FROM dkim_keys k WHERE k.domain_id = d.id ORDER BY k.id DESC LIMIT 1) AS selector
             FROM domains d WHERE d.instance_id = $1 AND d.name = ANY($2) ORDER BY d.name`,
          [tenant.instanceId, names],
        );
        return rows.map((r) => ({ name: r.name, selector: r.selector ?? 'cartero' }));
      };
      const summary: Summary = {
        benchmark: 'DMARC reports through the listener, and the listings over a year (issue 39)',
        date: startedAt,
        command: 'npx tsc -p tsconfig.json && npm run bench:dmarc',
        machine: machineInfo('the load generator (SMTP clients, autocannon) runs in this process on the same cores as the service'),
        busy_cores_before: busyBefore,
        busy_cores_after: NaN,
        loadavg_before: loadavgBefore,
        loadavg_after: '',
      };
      if (PARTS.has('listener')) {
        const names = Array.from({ length: LISTENER_DOMAINS }, (_, i) => `listener-${i + 1}.${SLUG}.example`);
        summary.listener = await listener(service, pool, ch, tenant, await addDomains(names), Number(new URL(inboundUrl).port));
      }
      if (PARTS.has('listings')) {
        const names = Array.from({ length: DOMAINS }, (_, i) => `d${String(i + 1).padStart(2, '0')}.${SLUG}.example`);
        summary.listings = await listings(service, pool, ch, tenant, await addDomains(names));
      }
      summary.busy_cores_after = await machineLoad(3_000);
      summary.loadavg_after = loadavg();
      await ch.close();
      ch = undefined;
      summary.stop = await stop();
      process.stdout.write(markdown(summary));
      process.stdout.write('\n```json\n' + JSON.stringify(summary, null, 2) + '\n```\n');
    } finally {
      await ch?.close();
    }
  });
}

runBench(main);
