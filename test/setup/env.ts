import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../config/paths.js';

/** Written by before.ts for the whole run, read by every test file. */
export interface TestEnv {
  /** A Postgres URL with rights to CREATE DATABASE; each test file makes its own database. */
  postgresAdminUrl: string;
  /** The embedded Postgres this run started (none on a machine Postgres): after.ts stops it. */
  embeddedPostgresPid?: number;
  /**
   * The database migrated once by before.ts (template-database.ts) that every file's database is
   * copied from (`CREATE DATABASE … TEMPLATE`); after.ts drops it.
   */
  templateDatabase: string;
  /** The suite's one ClickHouse server (suite-clickhouse.ts), a database in it per file; after.ts stops it. */
  clickhouse: SuiteClickHouse;
}

export interface SuiteClickHouse {
  /** The server's root URL with its credentials (no database path). */
  url: string;
  /** The launcher's pid. */
  pid: number;
  /** The process that started it and holds it for the run (clickhouse-holder.ts): the one to stop. */
  holderPid: number;
}

/** SIGINT (Postgres's fast shutdown), then SIGKILL if it still runs after 30 s. */
export async function stopProcess(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGINT');
  for (const deadline = Date.now() + 30_000; alive() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(pid, 'SIGKILL');
}

export const TEST_DIR = join(projectRoot, '.data', 'test');
export const TEST_ENV_FILE = join(TEST_DIR, 'env.json');

export function testEnv(): TestEnv {
  return JSON.parse(readFileSync(TEST_ENV_FILE, 'utf8')) as TestEnv;
}

/**
 * Per-file ClickHouse dirs (.data/test/clickhouse/<database>) are removed by each file's own
 * teardown; a file that crashed leaves its dir behind. Those are removed here, before and after
 * a run, but only once they are older than any test file can run (tap's timeout is 300 s), so a
 * second run of the suite in the same checkout never deletes the dirs of one still running.
 */
export function removeStaleClickHouseDirs(olderThanMs = 60 * 60 * 1000): void {
  const root = join(TEST_DIR, 'clickhouse');
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return; // no dir yet
  }
  for (const name of names) {
    const dir = join(root, name);
    try {
      if (Date.now() - statSync(dir).mtimeMs > olderThanMs) rmSync(dir, { recursive: true, force: true });
    } catch {
      // removed meanwhile by its own teardown
    }
  }
}
