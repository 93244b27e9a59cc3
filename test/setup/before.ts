import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../sql/embedded.js';
import { freePort } from '../../config/ports.js';
import { removeStaleClickHouseDirs, TEST_DIR, TEST_ENV_FILE, type TestEnv } from './env.js';

/**
 * Runs once before the suite (tap's `before`): finds a Postgres that can create one database
 * per test file: TEST_DATABASE_URL if set, else the machine's Postgres on 127.0.0.1:5432, else an
 * embedded one under .data/test. (ClickHouse is started per test file: it is ready in ~150 ms
 * and dies with the process that started it.)
 */
async function reachable(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

async function postgresAdminUrl(): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  const local = 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await reachable(local)) return local;
  const server = await startEmbeddedPostgres({ dir: join(TEST_DIR, 'postgres'), port: await freePort(), database: 'postgres' });
  return server.url;
}

async function main(): Promise<void> {
  removeStaleClickHouseDirs();
  mkdirSync(TEST_DIR, { recursive: true });
  const admin = await postgresAdminUrl();
  const env: TestEnv = { postgresAdminUrl: admin };
  writeFileSync(TEST_ENV_FILE, JSON.stringify(env, null, 2));
  console.log(`# test postgres: ${new URL(admin).host}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
