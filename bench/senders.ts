/**
 * Benchmark (issue 2): authenticated GET /v1/senders, measured with autocannon on loopback
 * against the service started the way a user starts it (`node dist/runtime/start.js`, the
 * embedded Postgres and ClickHouse under a fresh DATA_DIR).
 *
 *   npx tsc -p tsconfig.json && node dist/bench/senders.js      (or: npm run bench:senders)
 *
 * Environment (all optional):
 *   BENCH_DURATION            seconds per measured run (default 20)
 *   BENCH_WARMUP              seconds of warm-up before the runs (default 10)
 *   BENCH_CONNECTIONS         comma-separated connection counts (default "10,50")
 *   BENCH_CHILD_NODE_OPTIONS  extra NODE_OPTIONS for the service's processes
 *   BENCH_CPU_PROF_DIR=DIR    preload dist/bench/cpu-profiler.js into the service: each process
 *                             writes DIR/<entry>.<pid>.cpuprofile when it stops (Node 20 refuses
 *                             --cpu-prof in NODE_OPTIONS); summarise with
 *                             node dist/bench/cpuprofile-summary.js DIR/web.<pid>.cpuprofile
 *   BENCH_COUNT_QUERIES=1     preload dist/bench/pg-query-counter.js into the service and
 *                             report Postgres round trips and pool checkouts per request
 *   BENCH_REFERENCE=0         skip the GET /healthz reference row (e.g. for a profile of /v1/senders only)
 *   BENCH_KEEP_DATA=1         keep the temp DATA_DIR (printed) instead of deleting it
 *
 * autocannon runs inside this process, on the same two cores as the service: the figures are
 * for service + load generator sharing the machine, a lower bound for the service alone.
 */
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { createSender } from '../domain/senders/senders.js';
import type { Pool } from '../sql/pool.js';
import { assertBuilt, benchPreloads, benchService, cpuSnapshot, loadBeforeStart, machineInfo, readQueryCounts, runBench, startService, type QueryCounts, type Service } from './service.js';
import { benchTenant, verifiedDomain } from './fixtures.js';
import { coresBetween, machineLoad, memoryMiB, round, sleep } from './proc.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number).filter((n) => n > 0);
const COUNT_QUERIES = process.env.BENCH_COUNT_QUERIES === '1';
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const REFERENCE = process.env.BENCH_REFERENCE !== '0';
const SENDERS = 50;
const DOMAINS = 5;
const TARGET_RPS = 2_000;

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------- process accounting (/proc)

/** The web process's memory; it must be alive while the benchmark measures it. */
function webMemory(pid: number): { rss: number; hwm: number } {
  const m = memoryMiB(pid);
  if (!m) throw new Error(`web process ${pid} has gone`);
  return m;
}

// ---------------------------------------------------------------- the service

// ---------------------------------------------------------------- fixtures

async function seed(pool: Pool): Promise<{ slug: string; key: string }> {
  const slug = 'bench';
  const tenant = await benchTenant(pool, slug, 'Benchmark');
  const key = await createApiKey(pool, { instanceSlug: slug, scopes: ['senders:read'] });
  for (let d = 0; d < DOMAINS; d++) {
    const domain = `mail${d + 1}.bench.example.com`;
    await verifiedDomain(tenant, pool, domain);
    for (let s = 0; s < SENDERS / DOMAINS; s++) {
      const n = d * (SENDERS / DOMAINS) + s + 1;
      await createSender(tenant, pool, { email: `sender${n}@${domain}`, name: `Sender ${n}` });
    }
  }
  return { slug, key: key.key };
}

// ---------------------------------------------------------------- measurement

interface Row {
  name: string;
  path: string;
  connections: number;
  duration_s: number;
  requests_total: number;
  requests_per_s_mean: number;
  requests_per_s_stddev: number;
  latency_ms_mean: number;
  latency_ms_p50: number;
  latency_ms_p99: number;
  latency_ms_max: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  throughput_MiB_per_s: number;
  /**
   * CPU time per wall second (1.0 = one core busy) during the run: the service's processes, this
   * process (autocannon), and the machine as a whole; `unattributed` is machine busy minus those
   * (kernel network work not charged to a process, and anything else running on the machine).
   */
  cpu_cores: {
    web: number;
    postgres: number;
    worker: number;
    clickhouse: number;
    supervisor: number;
    bench_autocannon: number;
    machine_busy: number;
    machine_softirq: number;
    machine_steal: number;
    unattributed: number;
  };
  /** With BENCH_COUNT_QUERIES=1: the web process's Postgres round trips and pool checkouts per request. */
  pg_per_request?: { round_trips: number; pool_checkouts: number; by_statement: Record<string, number> };
}

/** Ask the web process's preloaded counter for its counts (BENCH_COUNT_QUERIES=1 only). */
async function queryCounts(service: Service): Promise<QueryCounts | undefined> {
  return COUNT_QUERIES ? readQueryCounts(service, service.webPid) : undefined;
}

async function measure(
  service: Service,
  headers: Record<string, string>,
  name: string,
  path: string,
  connections: number,
  duration: number,
): Promise<Row> {
  await sleep(1_000);
  const q0 = await queryCounts(service);
  const s0 = cpuSnapshot(service);
  const r = await autocannon({ url: service.url + path, connections, duration, headers });
  const s1 = cpuSnapshot(service);
  const wall = (s1.at - s0.at) / 1000;
  // Requests still in flight when autocannon stops finish within a few ms.
  await sleep(200);
  const q1 = await queryCounts(service);
  const SERVICE = ['web', 'postgres', 'worker', 'clickhouse', 'supervisor'] as const;
  const per = (k: (typeof SERVICE)[number]) => round((s1[k] - s0[k]) / wall, 2);
  const bench = (s1.bench - s0.bench) / wall;
  const machine = coresBetween(s0.machine, s1.machine);
  const attributed = SERVICE.reduce((s, k) => s + (s1[k] - s0[k]) / wall, 0) + bench;
  const row: Row = {
    name,
    path,
    connections,
    duration_s: duration,
    requests_total: r.requests.total,
    requests_per_s_mean: round(r.requests.mean),
    requests_per_s_stddev: round(r.requests.stddev),
    latency_ms_mean: round(r.latency.mean, 2),
    latency_ms_p50: r.latency.p50,
    latency_ms_p99: r.latency.p99,
    latency_ms_max: r.latency.max,
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    throughput_MiB_per_s: round(r.throughput.mean / 1024 / 1024, 2),
    cpu_cores: {
      web: per('web'),
      postgres: per('postgres'),
      worker: per('worker'),
      clickhouse: per('clickhouse'),
      supervisor: per('supervisor'),
      bench_autocannon: round(bench, 2),
      machine_busy: round(machine.busy, 2),
      machine_softirq: round(machine.softirq, 2),
      machine_steal: round(machine.steal, 2),
      unattributed: round(machine.busy - attributed, 2),
    },
  };
  if (q0 && q1 && r.requests.total) {
    // autocannon's total counts completed requests; the few in flight at the end add < 0.5 %.
    const n = r.requests.total;
    const by: Record<string, number> = {};
    for (const [k, v] of Object.entries(q1.by_statement)) {
      const d = v - (q0.by_statement[k] ?? 0);
      if (d > 0) by[k] = round(d / n, 2);
    }
    row.pg_per_request = { round_trips: round((q1.total - q0.total) / n, 2), pool_checkouts: round((q1.checkouts - q0.checkouts) / n, 2), by_statement: by };
  }
  log(
    `${name} c=${connections}: ${row.requests_per_s_mean} req/s, p50 ${row.latency_ms_p50} ms, p99 ${row.latency_ms_p99} ms, ` +
      `non-2xx ${row.non_2xx}, errors ${row.errors}; cpu web ${row.cpu_cores.web} pg ${row.cpu_cores.postgres} ` +
      `autocannon ${row.cpu_cores.bench_autocannon} unattributed ${row.cpu_cores.unattributed} machine ${row.cpu_cores.machine_busy}/${cpus().length}` +
      (row.pg_per_request ? `; pg round trips/request ${row.pg_per_request.round_trips}` : ''),
  );
  return row;
}

async function main(): Promise<void> {
  assertBuilt();
  const loadBefore = await loadBeforeStart();
  const service = await startService({
    prefix: 'cartero-bench-',
    nodeOptions: [process.env.BENCH_CHILD_NODE_OPTIONS ?? '', ...benchPreloads({ cpuProfile: !!CPU_PROF_DIR, countQueries: COUNT_QUERIES })],
  });
  await benchService(service, 2, async (pool, stop) => {
    const { slug, key } = await seed(pool);
    const headers = { authorization: `Bearer ${key}`, 'x-instance-slug': slug };
    log(`seeded instance "${slug}" with ${SENDERS} senders on ${DOMAINS} verified domains`);

    // Sanity: the measured requests are real, successful, complete pages.
    for (const [path, expected] of [['/v1/senders', 20], ['/v1/senders?page_size=100', SENDERS]] as const) {
      const res = await fetch(service.url + path, { headers });
      const body = (await res.json()) as { data?: Array<{ domain_is_verified: boolean }>; pagination?: { total_items: number } };
      if (res.status !== 200 || body.data?.length !== expected || body.pagination?.total_items !== SENDERS || !body.data.every((s) => s.domain_is_verified)) {
        throw new Error(`unexpected answer to GET ${path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      }
    }
    const unauth = await fetch(service.url + '/v1/senders');
    if (unauth.status !== 401) throw new Error(`GET /v1/senders without a key answered ${unauth.status}, expected 401`);

    const rssBefore = webMemory(service.webPid);
    log(`web pid ${service.webPid}, RSS before warm-up ${rssBefore.rss} MiB; warming up ${WARMUP} s`);
    const warm = await autocannon({ url: service.url + '/v1/senders', connections: Math.max(...CONNECTIONS), duration: WARMUP, headers });
    if (warm.non2xx || warm.errors) throw new Error(`warm-up had ${warm.non2xx} non-2xx and ${warm.errors} errors`);
    const rssAfterWarmup = webMemory(service.webPid);

    const rows: Row[] = [];
    for (const connections of CONNECTIONS) {
      rows.push(await measure(service, headers, 'GET /v1/senders (page_size 20)', '/v1/senders', connections, DURATION));
      rows.push(await measure(service, headers, 'GET /v1/senders?page_size=100 (all 50)', '/v1/senders?page_size=100', connections, DURATION));
    }
    // Ceiling of the HTTP stack alone (Express, request id, access log, metrics; no auth, no SQL).
    if (REFERENCE) rows.push(await measure(service, {}, 'GET /healthz (no auth, no SQL; reference)', '/healthz', Math.max(...CONNECTIONS), Math.min(DURATION, 10)));
    const rssAfter = webMemory(service.webPid);
    const loadAfterRuns = await machineLoad(3_000);

    const stopped = await stop();

    const senderRows = rows.filter((r) => r.path.startsWith('/v1/senders'));
    const summary = {
      benchmark: 'authenticated GET /v1/senders (issue 2)',
      date: new Date().toISOString(),
      machine: machineInfo('autocannon runs in this process on the same cores as the service (web, worker, Postgres, ClickHouse)'),
      setup: {
        command: 'npx tsc -p tsconfig.json && node dist/bench/senders.js',
        service: 'node dist/runtime/start.js (embedded Postgres and ClickHouse, fresh DATA_DIR, LOG_LEVEL=warn)',
        senders: SENDERS,
        domains_verified: DOMAINS,
        warmup_s: WARMUP,
        duration_s: DURATION,
        child_node_options: process.env.BENCH_CHILD_NODE_OPTIONS ?? null,
        count_queries: COUNT_QUERIES,
        cpu_profile_dir: CPU_PROF_DIR ?? null,
      },
      /** Busy cores measured over 3 s before the service started (other work on the machine). */
      machine_busy_cores_before_start: loadBefore,
      target_requests_per_s: TARGET_RPS,
      meets_target: senderRows.every((r) => r.requests_per_s_mean >= TARGET_RPS),
      all_2xx_no_errors: rows.every((r) => r.non_2xx === 0 && r.errors === 0 && r.timeouts === 0),
      /** Busy cores over 3 s after the runs with the service idle (still up). */
      machine_busy_cores_after_runs: loadAfterRuns,
      web_rss_mib: {
        before_warmup: rssBefore.rss,
        after_warmup: rssAfterWarmup.rss,
        after_runs: rssAfter.rss,
        peak: rssAfter.hwm,
      },
      rows,
      stop: stopped,
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    if (!summary.all_2xx_no_errors) process.exitCode = 1;
  });
}

runBench(main);
