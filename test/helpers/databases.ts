import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { join } from 'node:path';
import { startEmbeddedClickHouse } from '../../analytics/embedded/server.js';
import { startEmbeddedClickHouseCluster } from '../../analytics/embedded/cluster.js';
import { createClickHouseClient, databaseOf } from '../../analytics/client.js';
import { loadConfig } from '../../config/config.js';
import { runMigrations } from '../../runtime/migrations.js';
import { createPool, type Pool } from '../../sql/pool.js';
import { TEST_DIR, testEnv } from '../setup/env.js';
import { sleep, type Teardown } from './wait.js';

export interface TestDatabases {
  databaseUrl: string;
  /** This file's ClickHouse database: in the suite's shared server, or on its own server (`ownClickHouse`). */
  clickhouseUrl: string;
  pool: Pool;
  /**
   * Only with `ownClickHouse` (or a cluster): this file's own ClickHouse server (shard 1 of a
   * cluster), which tests may stop and restart (outage tests). Files on the suite's shared server
   * have none, so none of them can stop it.
   */
  clickhouse?: OwnClickHouse;
  /** With `shards`: the cluster's name and each shard's URL (database path included), shard 1 first. */
  cluster?: { name: string; shardUrls: string[] };
}

export interface OwnClickHouse {
  url: string;
  dir: string;
  pid: number;
  stop(): Promise<void>;
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
  /**
   * A ClickHouse server of this file's own (`clickhouse`), for a file that stops, pauses or
   * restarts it; every other file gets a database in the suite's one server (test/setup/).
   */
  ownClickHouse?: boolean;
}

// Destructive helpers refuse any database whose name does not say it is a test one.
function assertTestName(name: string): void {
  if (!/^cartero_test_[a-z0-9_]+$/.test(name)) throw new Error(`refusing to touch non-test database ${name}`);
}

/**
 * A new Postgres database named for a test file (`cartero_test_<label>_<random>`): empty, or a
 * copy of `template`.
 */
async function createTestDatabase(label: string, template?: string): Promise<{ name: string; databaseUrl: string }> {
  const env = testEnv();
  const name = `cartero_test_${label.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(0, 20)}_${randomBytes(4).toString('hex')}`;
  assertTestName(name);
  const admin = new pg.Client({ connectionString: env.postgresAdminUrl });
  await admin.connect();
  try {
    const sql = `CREATE DATABASE ${pg.escapeIdentifier(name)}${template ? ` TEMPLATE ${pg.escapeIdentifier(template)}` : ''}`;
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.query(sql);
        break;
      } catch (err) {
        // Postgres copies a template only while no session is connected to it (it waits 5 s for
        // them to go first). before.ts closes its own and forbids new ones, but autovacuum may
        // still visit it, and Postgres lets it: try again, briefly.
        if ((err as { code?: string }).code !== TEMPLATE_IN_USE || attempt >= TEMPLATE_ATTEMPTS) throw err;
        await sleep(200);
      }
    }
  } finally {
    await admin.end();
  }
  return { name, databaseUrl: Object.assign(new URL(env.postgresAdminUrl), { pathname: `/${name}` }).toString() };
}

/** "source database … is being accessed by other users" (object_in_use). */
const TEMPLATE_IN_USE = '55006';
const TEMPLATE_ATTEMPTS = 5;

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
 * A Postgres database for one test file (so files run in parallel), copied from the suite's
 * template (migrated once by test/setup/before.ts), and a ClickHouse database of its own in the
 * suite's server (or a server of its own: `ownClickHouse`), brought up to date by the same code
 * `release` runs; both removed at teardown. Migration tests that need an empty database use
 * emptyTestDatabase instead.
 */
export async function testDatabases(
  t: Teardown,
  label: string,
  opts: TestDatabasesOptions & { ownClickHouse: true },
): Promise<TestDatabases & { clickhouse: OwnClickHouse }>;
export async function testDatabases(t: Teardown, label?: string, opts?: TestDatabasesOptions): Promise<TestDatabases>;
export async function testDatabases(t: Teardown, label = 'db', opts: TestDatabasesOptions = {}): Promise<TestDatabases> {
  const started = Date.now();
  const env = testEnv();
  const { name, databaseUrl } = await createTestDatabase(label, env.templateDatabase);
  const copied = Date.now();
  const chDir = join(TEST_DIR, 'clickhouse', name);
  const shards = opts.shards ?? envShards();
  const own = opts.ownClickHouse || shards !== undefined;
  const cluster = shards !== undefined ? await startEmbeddedClickHouseCluster({ dir: chDir, shards }) : undefined;
  const ch = cluster ? cluster.shards[0]! : own ? await startEmbeddedClickHouse({ dir: chDir }) : undefined;
  // On its own server the database is `cartero`, as before; in the shared one, the file's name.
  const clickhouseUrl = ch ? `${ch.url}/cartero` : `${env.clickhouse.url}/${name}`;
  const shardUrls = cluster?.shards.map((s) => `${s.url}/cartero`);
  // On the copy, the Postgres steps find nothing to apply but this file's own queue policy (from
  // this process's SEND_RETRY_* and SEND_JOB_EXPIRE_SECONDS, which test files set before calling
  // this) and SANDBOX_DOMAIN; ClickHouse is migrated from scratch.
  await runMigrations({
    databaseUrl,
    clickhouseUrl,
    send: loadConfig(process.env).send,
    sandboxDomain: loadConfig(process.env).domains.sandboxDomain,
    ...(cluster ? { clickhouseCluster: { name: cluster.name, nodes: shardUrls! } } : {}),
  });
  const pool = createPool(databaseUrl, { max: 5, application: 'cartero-test' });
  console.log(`# testDatabases ${label}: ${Date.now() - started} ms (Postgres copy ${copied - started} ms)`);

  t.teardown(async () => {
    await pool.end();
    await dropTestDatabase(name);
    if (ch) {
      await (cluster ?? ch).stop();
      await rm(chDir, { recursive: true, force: true });
    } else {
      await dropClickHouseDatabase(clickhouseUrl);
    }
  });
  return {
    databaseUrl,
    clickhouseUrl,
    pool,
    ...(ch ? { clickhouse: { url: ch.url, dir: cluster ? join(chDir, 'shard-1') : chDir, pid: ch.pid, stop: ch.stop } } : {}),
    ...(cluster ? { cluster: { name: cluster.name, shardUrls: shardUrls! } } : {}),
  };
}

/** A file's database in the suite's ClickHouse; the server goes on for the other files. */
async function dropClickHouseDatabase(url: string): Promise<void> {
  const database = databaseOf(url);
  assertTestName(database);
  const client = createClickHouseClient(url, 'default');
  try {
    await client.command({ query: 'DROP DATABASE IF EXISTS {db:Identifier} SYNC', query_params: { db: database } });
  } finally {
    await client.close();
  }
}
