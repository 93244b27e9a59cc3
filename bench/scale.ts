/**
 * Benchmark (issue 26): one machine, more dynos and shards. Runs the existing benchmarks twice
 * each, against the service started the way a user starts it (`node dist/runtime/start.js`,
 * fresh DATA_DIR each time), with only the scale variable changed between the two runs:
 *  - sending (bench/send.ts): WORKER_DYNOS=1 versus 2;
 *  - tracking (bench/track.ts): WEB_DYNOS=1 versus 2;
 *  - grouped listings and exports (bench/analytics.ts): CLICKHOUSE_SHARDS=1 versus 2.
 * Each child benchmark reports the CPU seconds of every dyno and shard of its measured phase
 * (bench/service.ts: `cpu_seconds_by_part`, from services.json's `dynos` and
 * `clickhouse_shards`): the evidence that the work splits between them. This benchmark prints a
 * markdown table and a JSON summary of both runs of each, side by side.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/scale.js      (or: npm run bench:scale)
 *
 * Environment (all optional):
 *   BENCH_SCALE_PARTS     which parts to run, comma-separated (default "send,track,analytics")
 *   BENCH_SCALE_MAILS     mails per sending run (default 5000)
 *   BENCH_SCALE_TRACK_S   seconds per tracking run, 50 connections (default 15)
 *   BENCH_SCALE_EVENTS    events loaded for the analytics runs (default 2000000)
 *   BENCH_WAIT_IDLE       passed on: each child first waits (up to that long) for an idle machine
 *
 * On this 2-core machine every process shares the same two cores, so a second dyno or shard can
 * only show that the work splits, not that it doubles (docs/performance.md, "Scale").
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../config/paths.js';
import { assertBuilt, runBench } from './service.js';
import { round } from './proc.js';

const log = (msg: string) => process.stderr.write(`[bench:scale] ${msg}\n`);
const intEnv = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return process.env[name] && Number.isInteger(v) && v > 0 ? v : fallback;
};
const PARTS = (process.env.BENCH_SCALE_PARTS ?? 'send,track,analytics').split(',').map((p) => p.trim());
const MAILS = intEnv('BENCH_SCALE_MAILS', 5_000);
const TRACK_S = intEnv('BENCH_SCALE_TRACK_S', 15);
const EVENTS = intEnv('BENCH_SCALE_EVENTS', 2_000_000);

/** Runs one child benchmark to its end; its JSON summary (the last ```json block, or the whole stdout). */
async function runChild(script: string, env: Record<string, string>): Promise<any> {
  const started = performance.now();
  log(`${script} ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  const child = spawn(process.execPath, [join(projectRoot, 'dist', 'bench', script)], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const fenced = out.lastIndexOf('```json\n');
  const text = fenced >= 0 ? out.slice(fenced + 8, out.indexOf('\n```', fenced + 8)) : out.slice(out.indexOf('{'));
  let summary: any;
  try {
    summary = JSON.parse(text);
  } catch {
    throw new Error(`${script} (${JSON.stringify(env)}) exited ${code} without a JSON summary:\n${out.slice(-3_000)}`);
  }
  if (code !== 0) log(`${script} exited ${code}: its checks failed (kept in the summary)`);
  return { exit_code: code, seconds: round((performance.now() - started) / 1000, 1), summary };
}

/** The share of each part in the total of the parts, in per cent. */
function shares(parts: Record<string, number> | undefined): Record<string, number> {
  const total = Object.values(parts ?? {}).reduce((a, b) => a + b, 0) || 1;
  return Object.fromEntries(Object.entries(parts ?? {}).map(([k, v]) => [k, round((100 * v) / total)]));
}

async function sending(dynos: number) {
  const r = await runChild('send.js', { WORKER_DYNOS: String(dynos), BENCH_MAILS: String(MAILS), BENCH_BASELINE: '0' });
  const e2e = r.summary.cartero?.end_to_end ?? {};
  const cpu = r.summary.cartero?.cpu_end_to_end ?? {};
  return {
    worker_dynos: dynos,
    mails: MAILS,
    mails_per_s: e2e.mails_per_s,
    all_sent: e2e.all_sent,
    eml_files_written: e2e.eml_files_written,
    worker_cpu_s: cpu.cpu_seconds?.worker,
    postgres_cpu_s: cpu.cpu_seconds?.postgres,
    by_dyno_cpu_s: cpu.cpu_seconds_by_part ?? {},
    by_dyno_share_pct: shares(cpu.cpu_seconds_by_part),
    exit_code: r.exit_code,
  };
}

async function tracking(dynos: number) {
  const r = await runChild('track.js', {
    WEB_DYNOS: String(dynos),
    BENCH_DURATION: String(TRACK_S),
    BENCH_WARMUP: '5',
    BENCH_CONNECTIONS: '50',
    BENCH_REFERENCE: '0',
  });
  const row = (r.summary.rows ?? []).find((x: any) => /\/t\/o/.test(x.name)) ?? {};
  return {
    web_dynos: dynos,
    hits_per_s: row.ok_per_s,
    p99_ms: row.latency_ms?.p99,
    failed: (row.failed ?? 0) + (row.errors ?? 0) + (row.timeouts ?? 0),
    web_cores: row.cpu_cores?.web,
    by_dyno_cpu_s: row.cpu_cores?.cpu_seconds_by_part ?? {},
    by_dyno_share_pct: shares(row.cpu_cores?.cpu_seconds_by_part),
    checks: r.summary.checks,
    exit_code: r.exit_code,
  };
}

async function analytics(shards: number) {
  const r = await runChild('analytics.js', {
    CLICKHOUSE_SHARDS: String(shards),
    BENCH_EVENTS: String(EVENTS),
    BENCH_MAILS: String(Math.max(1_000, Math.round(EVENTS / 10))),
    BENCH_POSTGRES: '0',
    BENCH_EXPORT_ROWS: String(Math.round(EVENTS / 10)),
    BENCH_EXPORT_RUNS: '1',
    BENCH_ITERATIONS: '5',
    // The listings and the export only: the providers part loads 10 M mails of its own.
    BENCH_PARTS: 'listings,exports',
  });
  const s = r.summary;
  const grouped = (s.cells ?? []).filter((c: any) => c.group_by !== 'none' && c.http);
  const p95s = grouped.map((c: any) => c.http.p95).sort((a: number, b: number) => a - b);
  const csv = (s.exports ?? []).find((e: any) => /csv/i.test(e.variant) && /HTTP/.test(e.variant));
  return {
    clickhouse_shards: shards,
    events: EVENTS,
    grouped_cells: grouped.length,
    grouped_p95_ms_median: p95s[Math.floor(p95s.length / 2)],
    grouped_p95_ms_max: p95s[p95s.length - 1],
    export_csv_rows_per_s: csv?.rows_per_s,
    rows_by_shard: s.load?.rows_by_shard ?? null,
    listings_cpu_by_shard_s: s.cpu?.['listings (HTTP + ClickHouse direct)']?.cpu_seconds_by_part ?? {},
    listings_cpu_share_pct: shares(s.cpu?.['listings (HTTP + ClickHouse direct)']?.cpu_seconds_by_part),
    checks: s.checks,
    exit_code: r.exit_code,
  };
}

function markdown(result: Record<string, any[]>): string {
  const lines = ['', '| part | 1 | 2 | split of the work with 2 (CPU seconds) |', '|---|---:|---:|---|'];
  const split = (x: any) => Object.entries(x.by_dyno_cpu_s ?? x.listings_cpu_by_shard_s ?? {}).map(([k, v]) => `${k} ${v}`).join(', ') || '—';
  if (result.send) {
    const [a, b] = result.send;
    lines.push(`| sending, mails/s (WORKER_DYNOS) | ${a.mails_per_s} | ${b.mails_per_s} | ${split(b)} |`);
  }
  if (result.track) {
    const [a, b] = result.track;
    lines.push(`| tracking, hits/s at 50 conn. (WEB_DYNOS) | ${a.hits_per_s} (p99 ${a.p99_ms} ms) | ${b.hits_per_s} (p99 ${b.p99_ms} ms) | ${split(b)} |`);
  }
  if (result.analytics) {
    const [a, b] = result.analytics;
    lines.push(`| grouped listings, median p95 ms (CLICKHOUSE_SHARDS) | ${a.grouped_p95_ms_median} | ${b.grouped_p95_ms_median} | ${split(b)}; rows ${JSON.stringify(b.rows_by_shard)} |`);
    lines.push(`| export csv, rows/s (CLICKHOUSE_SHARDS) | ${a.export_csv_rows_per_s} | ${b.export_csv_rows_per_s} | |`);
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  assertBuilt();
  const result: Record<string, any[]> = {};
  if (PARTS.includes('send')) result.send = [await sending(1), await sending(2)];
  if (PARTS.includes('track')) result.track = [await tracking(1), await tracking(2)];
  if (PARTS.includes('analytics')) result.analytics = [await analytics(1), await analytics(2)];
  const summary = {
    benchmark: 'scale on one machine: 1 versus 2 worker dynos, web dynos, ClickHouse shards (issue 26)',
    date: new Date().toISOString(),
    machine: { nproc: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version },
    command: 'npx tsc -p tsconfig.json && node dist/bench/scale.js',
    result,
  };
  process.stdout.write(markdown(result));
  process.stdout.write('\n```json\n' + JSON.stringify(summary, null, 2) + '\n```\n');
  const failed = Object.values(result).flat().filter((r) => r.exit_code !== 0);
  if (failed.length > 0) {
    log(`${failed.length} child run(s) failed their own checks (see above)`);
    process.exitCode = 1;
  }
}

runBench(main);
