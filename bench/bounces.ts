/**
 * Benchmark (issue 17): inbound reports classified per second by the real inbound listener, and
 * the listener's time per message, with the mixed bounce corpus (../shared/corpus/bounces: DSNs,
 * MTA text bounces, feedback reports, auto-replies) replayed in a loop.
 *
 *   npx tsc -p tsconfig.json && npm run bench:bounces
 *
 * The service is started the way a user starts it (`node dist/runtime/start.js`: embedded Postgres
 * and ClickHouse, fresh DATA_DIR); its worker runs the inbound listener (INBOUND_SMTP_PORT, with
 * the per-address rate and per-connection limits raised so the load generator is not throttled).
 * BENCH_MAILS sent mails are seeded in Postgres; each report goes to one mail's tagged VERP return
 * path (report-tag.ts), round robin over the mails and the samples, so the first reports of a mail
 * bounce or log it and later ones find it already bounced (the whole path runs each time: parse,
 * decode, classify, authenticate, one tenant transaction).
 *
 * BENCH_CONNECTIONS SMTP clients each send one message at a time over a kept connection for
 * BENCH_DURATION seconds. Per message: from the start of MAIL FROM to the final reply after DATA
 * (the listener replies after the report is applied: that is the listener's time per message, plus
 * two loopback round trips). Target (issue 17): >= 200 reports/s.
 *
 * Environment (all optional): BENCH_DURATION (default 20), BENCH_CONNECTIONS (default 4),
 * BENCH_MAILS (default 5000), BENCH_KEEP_DATA=1.
 */
import { cpus } from 'node:os';
import nodemailer, { type Transporter } from 'nodemailer';
import { readServices } from '../config/services-file.js';
import type { Pool } from '../sql/pool.js';
import { loadBounceCorpus, sampleBytes } from '../test/helpers/bounce-corpus.js';
import { loadavg, percentile, round } from './proc.js';
import { assertBuilt, benchPreloads, checkStopped, cleanUp, cpuSnapshot, loadBeforeStart, runBench, servicePool, startService, stopService, type Stopped } from './service.js';
import { benchTenant, sentMails, verifiedDomain } from './fixtures.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const MAILS = Number(process.env.BENCH_MAILS ?? 5000);
const TARGET_PER_S = 200;
const DOMAIN = 'bench-bounces.example';

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

async function seed(pool: Pool): Promise<string[]> {
  const tenant = await benchTenant(pool, 'bench-bounces', 'Bounce benchmark');
  await verifiedDomain(tenant, pool, DOMAIN);
  return sentMails(tenant, pool, DOMAIN, MAILS);
}

async function main(): Promise<void> {
  assertBuilt();
  const corpus = loadBounceCorpus();
  const samples = corpus.samples.map((s) => sampleBytes(corpus, s));
  const loadBefore = await loadBeforeStart();
  const loadavgBefore = loadavg();
  // Inherited by the service's worker: the load generator is one client address on one connection each.
  process.env.INBOUND_RATE_PER_MINUTE = '100000000';
  process.env.INBOUND_MAX_MESSAGES_PER_CONNECTION = '100000000';
  // BENCH_CPU_PROF_DIR=DIR: each process of the service writes a CPU profile there when it stops (bench/cpu-profiler.ts).
  const service = await startService({ prefix: 'cartero-bench-bounces-', nodeOptions: benchPreloads({ cpuProfile: !!process.env.BENCH_CPU_PROF_DIR, countQueries: false }) });
  let pool: Pool | undefined;
  let stopped: Stopped | undefined;
  const transports: Transporter[] = [];
  try {
    const inboundUrl = readServices(service.dataDir).inbound_smtp?.url;
    if (!inboundUrl) throw new Error(`no inbound listener recorded in ${service.dataDir}/services.json`);
    const port = Number(new URL(inboundUrl).port);
    pool = servicePool(service, 4);
    const verp = await seed(pool);
    log(`seeded ${MAILS} sent mails; ${samples.length} corpus samples; listener on port ${port}; ${CONNECTIONS} connections for ${DURATION} s`);

    let next = 0;
    const latencies: number[] = [];
    const replies = new Map<string, number>();
    const cpu0 = cpuSnapshot(service);
    const started = performance.now();
    const until = started + DURATION * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity });
        transports.push(transport);
        while (performance.now() < until) {
          const i = next++;
          const t0 = performance.now();
          let reply: string;
          try {
            reply = (await transport.sendMail({ envelope: { from: '', to: [verp[i % verp.length]!] }, raw: samples[i % samples.length]! })).response;
          } catch (err) {
            reply = (err as { response?: string; message: string }).response ?? (err as Error).message;
          }
          latencies.push(performance.now() - t0);
          const key = reply.slice(0, 3);
          replies.set(key, (replies.get(key) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu1 = cpuSnapshot(service);
    const loadavgAfter = loadavg();
    latencies.sort((a, b) => a - b);
    const perS = latencies.length / seconds;
    const wall = (cpu1.at - cpu0.at) / 1000;
    const result = {
      reports: latencies.length,
      seconds: round(seconds, 1),
      reports_per_s: round(perS),
      p50_ms: round(percentile(latencies, 50), 1),
      p99_ms: round(percentile(latencies, 99), 1),
      max_ms: round(latencies[latencies.length - 1] ?? NaN, 1),
      replies: Object.fromEntries(replies),
      cores: { worker: round((cpu1.worker - cpu0.worker) / wall, 2), postgres: round((cpu1.postgres - cpu0.postgres) / wall, 2), bench: round((cpu1.bench - cpu0.bench) / wall, 2) },
      connections: CONNECTIONS,
      machine: { nproc: cpus().length, busy_cores_before: loadBefore, loadavg_before: loadavgBefore, loadavg_after: loadavgAfter },
      target_reports_per_s: TARGET_PER_S,
      meets_target: perS >= TARGET_PER_S,
    };
    console.log(JSON.stringify(result, null, 2));
    if ([...replies.keys()].some((k) => k !== '250')) log(`warning: replies other than 250: ${JSON.stringify(result.replies)}`);
    stopped = await stopService(service);
    checkStopped(service, stopped);
  } finally {
    for (const tr of transports) tr.close();
    await cleanUp(service, stopped, [() => pool?.end()]);
  }
}

runBench(main);
