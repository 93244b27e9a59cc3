/**
 * Benchmark-only preload: counts the Postgres round trips a process makes, by statement.
 * Loaded into the service's processes by `BENCH_COUNT_QUERIES=1 node dist/bench/senders.js`
 * (which adds `--import <this file>` to their NODE_OPTIONS); never part of the service.
 *
 * Every pg `Client#query` call is one round trip (a multi-statement simple query such as the
 * tenant "BEGIN; SET LOCAL ...; SELECT set_config(...)" is one message and one ReadyForQuery;
 * a parameterised query sends Parse/Bind/Describe/Execute/Sync in one write). `Pool#query`
 * goes through `Client#query`, so it is counted once. Pool checkouts are counted too.
 *
 * On SIGUSR2 the process writes its counts, synchronously, to $DATA_DIR/pg-queries.<pid>.json.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const counts = new Map<string, number>();
let total = 0;
let checkouts = 0;

function label(config: unknown): string {
  const text = typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '?');
  return text.replace(/\s+/g, ' ').trim().slice(0, 60);
}

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
