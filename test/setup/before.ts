import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../sql/embedded.js';
import { freePort } from '../../config/ports.js';
import { removeStaleClickHouseDirs, stopProcess, TEST_DIR, TEST_ENV_FILE, testEnv, type TestEnv } from './env.js';
import { startSuiteClickHouse, stopSuiteClickHouse } from './suite-clickhouse.js';
import { createTemplateDatabase, templateDatabaseName } from './template-database.js';

/**
 * Runs once before the suite (tap's `before`): finds a Postgres that can create one database
 * per test file: TEST_DATABASE_URL if set, else the machine's Postgres on 127.0.0.1:5432, else an
 * embedded one under .data/test; migrates the template every file's database is copied from; and
 * starts the suite's ClickHouse, where every file makes a database of its own.
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

async function postgresAdminUrl(): Promise<{ url: string; embeddedPid?: number }> {
  if (process.env.TEST_DATABASE_URL) return { url: process.env.TEST_DATABASE_URL };
  const local = 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await reachable(local)) return { url: local };
  const dir = join(TEST_DIR, 'postgres');
  await stopUnreachable(dir);
  const server = await startEmbeddedPostgres({ dir, port: await freePort(), database: 'postgres' });
  return { url: server.url, embeddedPid: server.pid };
}

/**
 * The suite's embedded Postgres is stopped by after.ts; one left running by a run that crashed is
 * adopted, unless it cannot be reached: a run inside a network namespace of its own (.ci/run)
 * leaves nothing reachable from the next one, so such a server is stopped and started anew.
 */
async function stopUnreachable(dir: string): Promise<void> {
  let pid: number;
  let port: number;
  try {
    [pid, , , port] = readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n').map(Number) as [number, number, number, number];
    process.kill(pid, 0);
  } catch {
    return; // none, or not running
  }
  const open = await new Promise<boolean>((done) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      done(true);
    });
    socket.setTimeout(2_000, () => {
      socket.destroy();
      done(false);
    });
    socket.on('error', () => done(false));
  });
  if (open) return;
  console.log(`# test postgres: the embedded server left by an earlier run (pid ${pid}) cannot be reached from here; stopping it`);
  await stopProcess(pid);
}

/**
 * .ci/run runs the suite in a network namespace with loopback only (issue 37), and says so with
 * CARTERO_TEST_LOOPBACK_ONLY: a run that claims it and sees another interface stops here, rather
 * than letting a test that reaches outside pass quietly.
 */
function checkLoopbackOnly(): void {
  if (!process.env.CARTERO_TEST_LOOPBACK_ONLY) return;
  const others = Object.keys(networkInterfaces()).filter((name) => name !== 'lo');
  if (others.length) throw new Error(`CARTERO_TEST_LOOPBACK_ONLY is set, but this network namespace has interfaces besides lo (${others.join(', ')}): run the suite as .ci/run does (unshare --net)`);
  console.log('# network: loopback only');
}

async function main(): Promise<void> {
  checkLoopbackOnly();
  removeStaleClickHouseDirs();
  mkdirSync(TEST_DIR, { recursive: true });
  await stopLeftClickHouse();
  const { url: admin, embeddedPid } = await postgresAdminUrl();
  const templateStart = Date.now();
  const templateDatabase = templateDatabaseName();
  await createTemplateDatabase(admin, templateDatabase);
  const templateMs = Date.now() - templateStart;
  const clickhouseStart = Date.now();
  const clickhouse = await startSuiteClickHouse();
  const env: TestEnv = { postgresAdminUrl: admin, embeddedPostgresPid: embeddedPid, templateDatabase, clickhouse };
  writeFileSync(TEST_ENV_FILE, JSON.stringify(env, null, 2));
  console.log(`# test postgres: ${new URL(admin).host}, template ${templateDatabase} migrated in ${templateMs} ms`);
  console.log(`# test clickhouse: 127.0.0.1:${new URL(clickhouse.url).port} (pid ${clickhouse.pid}), ready in ${Date.now() - clickhouseStart} ms`);
}

/** The suite's ClickHouse of a run that crashed before after.ts (its data dir is wiped next). */
async function stopLeftClickHouse(): Promise<void> {
  let left: TestEnv['clickhouse'] | undefined;
  try {
    left = testEnv().clickhouse;
  } catch {
    return; // no earlier run, or one from before the suite had a ClickHouse of its own
  }
  if (left) await stopSuiteClickHouse(left);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
