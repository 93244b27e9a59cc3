import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { join } from 'node:path';
import { startEmbeddedClickHouse } from '../../analytics/embedded/server.js';
import { startEmbeddedClickHouseCluster } from '../../analytics/embedded/cluster.js';
import { loadConfig } from '../../config/config.js';
import { runMigrations } from '../../runtime/migrations.js';
import { createPool, type Pool } from '../../sql/pool.js';
import { TEST_DIR, testEnv } from '../setup/env.js';
import type { Teardown } from './wait.js';

export interface TestDatabases {
  databaseUrl: string;
  clickhouseUrl: string;
  pool: Pool;
  /** This file's own ClickHouse server (shard 1 of a cluster): tests may stop and restart it (outage tests). */
  clickhouse: { url: string; dir: string; pid: number; stop(): Promise<void> };
  /** With `shards`: the cluster's name and each shard's URL (database path included), shard 1 first. */
  cluster?: { name: string; shardUrls: string[] };
}

/**
 * CARTERO_TEST_CLICKHOUSE_SHARDS=2 runs every file that calls testDatabases against an embedded
 * 2-shard cluster instead of one server: how the whole analytics suite is checked in cluster mode
 * by hand (CI runs test/analytics-cluster.test.ts, which compares both modes, within its budget).
 */
function envShards(): number | undefined {
  const raw = process.env.CARTERO_TEST_CLICKHOUSE_SHARDS;
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`CARTERO_TEST_CLICKHOUSE_SHARDS must be a whole number of at least 1, got ${raw}`);
  return n;
}

export interface TestDatabasesOptions {
  /**
   * A ClickHouse cluster of this many embedded shards in cluster mode (CLICKHOUSE_CLUSTER:
   * Distributed tables over shard-local ones) instead of one server; clickhouseUrl is shard 1's.
   */
  shards?: number;
}

// Destructive helpers refuse any database whose name does not say it is a test one.
function assertTestName(name: string): void {
  if (!/^cartero_test_[a-z0-9_]+$/.test(name)) throw new Error(`refusing to touch non-test database ${name}`);
}

/** A new, empty Postgres database named for a test file (`cartero_test_<label>_<random>`). */
async function createTestDatabase(label: string): Promise<{ name: string; databaseUrl: string }> {
  const env = testEnv();
  const name = `cartero_test_${label.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(0, 20)}_${randomBytes(4).toString('hex')}`;
  assertTestName(name);
  const admin = new pg.Client({ connectionString: env.postgresAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await admin.end();
  return { name, databaseUrl: Object.assign(new URL(env.postgresAdminUrl), { pathname: `/${name}` }).toString() };
}

async function dropTestDatabase(name: string): Promise<void> {
  assertTestName(name);
  const drop = new pg.Client({ connectionString: testEnv().postgresAdminUrl });
  await drop.connect();
  await drop.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  await drop.end();
}

/**
 * An empty Postgres database (no migration run, no ClickHouse), removed at teardown: for tests
 * that migrate it themselves, such as an upgrade from an older schema with rows in it.
 */
export async function emptyTestDatabase(t: Teardown, label = 'db'): Promise<{ databaseUrl: string; pool: Pool }> {
  const { name, databaseUrl } = await createTestDatabase(label);
  const pool = createPool(databaseUrl, { max: 5, application: 'cartero-test' });
  t.teardown(async () => {
    await pool.end();
    await dropTestDatabase(name);
  });
  return { databaseUrl, pool };
}

/**
 * A fresh Postgres database and a ClickHouse server of its own for one test file (so files run
 * in parallel), fully migrated by the same code `release` runs, removed at teardown.
 */
export async function testDatabases(t: Teardown, label = 'db', opts: TestDatabasesOptions = {}): Promise<TestDatabases> {
  const { name, databaseUrl } = await createTestDatabase(label);
  const chDir = join(TEST_DIR, 'clickhouse', name);
  const shards = opts.shards ?? envShards();
  const cluster = shards !== undefined ? await startEmbeddedClickHouseCluster({ dir: chDir, shards }) : undefined;
  const ch = cluster ? cluster.shards[0]! : await startEmbeddedClickHouse({ dir: chDir });
  const clickhouseUrl = `${ch.url}/cartero`;
  const shardUrls = cluster?.shards.map((s) => `${s.url}/cartero`);
  // The send queue's policy from this process's SEND_RETRY_* and SEND_JOB_EXPIRE_SECONDS, which
  // test files set before calling this.
  await runMigrations({
    databaseUrl,
    clickhouseUrl,
    send: loadConfig(process.env).send,
    sandboxDomain: loadConfig(process.env).domains.sandboxDomain,
    ...(cluster ? { clickhouseCluster: { name: cluster.name, nodes: shardUrls! } } : {}),
  });
  const pool = createPool(databaseUrl, { max: 5, application: 'cartero-test' });

  t.teardown(async () => {
    await pool.end();
    await dropTestDatabase(name);
    await (cluster ?? ch).stop();
    await rm(chDir, { recursive: true, force: true });
  });
  return {
    databaseUrl,
    clickhouseUrl,
    pool,
    clickhouse: { url: ch.url, dir: cluster ? join(chDir, 'shard-1') : chDir, pid: ch.pid, stop: ch.stop },
    ...(cluster ? { cluster: { name: cluster.name, shardUrls: shardUrls! } } : {}),
  };
}
