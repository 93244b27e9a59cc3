/**
 * Benchmark-only preload for bench/send.ts, added to the service's NODE_OPTIONS with
 * `--import` (Node 20 refuses --cpu-prof in NODE_OPTIONS); never part of the service.
 *
 *   BENCH_SEND_CPU_PROF_DIR=DIR  a V8 CPU profile of each process, written when it exits as
 *                                DIR/<entry>.<pid>.cpuprofile (summarise with
 *                                node dist/bench/cpuprofile-summary.js FILE)
 *   BENCH_SEND_COUNT_QUERIES=1   counts Postgres round trips (pg Client#query calls, pg-boss's
 *                                included) and pool checkouts; on SIGUSR2 the process writes
 *                                them synchronously to $DATA_DIR/pg-queries.<pid>.json
 */
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import pg from 'pg';

const profDir = process.env.BENCH_SEND_CPU_PROF_DIR;
if (profDir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_SEND_CPU_PROF_INTERVAL_US ?? 500) });
  session.post('Profiler.start');
  // The in-thread session answers synchronously, so this works in an 'exit' handler.
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err || !result) return;
      mkdirSync(profDir, { recursive: true });
      const entry = basename(process.argv[1] ?? 'node').replace(/\.js$/, '');
      writeFileSync(join(profDir, `${entry}.${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}

if (process.env.BENCH_SEND_COUNT_QUERIES === '1') {
  const counts = new Map<string, number>();
  let total = 0;
  let checkouts = 0;
  const label = (config: unknown): string => {
    const text = typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '?');
    return text.replace(/\s+/g, ' ').trim().slice(0, 70);
  };
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const originalQuery = proto.query;
  proto.query = function countedQuery(this: unknown, ...args: unknown[]) {
    total++;
    const key = label(args[0]);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return originalQuery.apply(this, args);
  };
  const poolProto = pg.Pool.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const originalConnect = poolProto.connect;
  poolProto.connect = function countedConnect(this: unknown, ...args: unknown[]) {
    checkouts++;
    return originalConnect.apply(this, args);
  };
  process.on('SIGUSR2', () => {
    const dir = process.env.DATA_DIR;
    if (!dir) return;
    writeFileSync(
      join(dir, `pg-queries.${process.pid}.json`),
      JSON.stringify({ pid: process.pid, total, checkouts, by_statement: Object.fromEntries(counts) }),
    );
  });
}
