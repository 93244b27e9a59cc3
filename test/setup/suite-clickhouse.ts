import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { stopProcess, TEST_DIR, type SuiteClickHouse } from './env.js';

/**
 * The suite's one ClickHouse server (before.ts starts it, after.ts stops it): each test file gets
 * a database of its own in it (test/helpers/databases.ts) instead of a server of its own. Files
 * that stop, pause or restart their ClickHouse still start their own (`ownClickHouse`).
 *
 * Its data lives outside .data/test/clickhouse/, whose old dirs env.ts removes, and is wiped at
 * each start: a database left by a crashed file goes with it.
 */
export const SUITE_CLICKHOUSE_DIR = join(TEST_DIR, 'clickhouse-suite');
const HOLDER = fileURLToPath(new URL('./clickhouse-holder.js', import.meta.url));
const START_TIMEOUT_MS = 60_000;

export async function startSuiteClickHouse(): Promise<SuiteClickHouse> {
  rmSync(SUITE_CLICKHOUSE_DIR, { recursive: true, force: true });
  const logPath = join(TEST_DIR, 'clickhouse-holder.log');
  const log = openSync(logPath, 'w', 0o600);
  // Detached, its output in a file, IPC closed once it has answered: nothing ties before.ts (or
  // tap, which waits for before.ts's output to end) to it.
  const holder = spawn(process.execPath, [HOLDER, SUITE_CLICKHOUSE_DIR], { detached: true, stdio: ['ignore', log, log, 'ipc'] });
  closeSync(log);
  try {
    const ready = await new Promise<{ url: string; pid: number }>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`not ready after ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      holder.once('message', (m) => {
        clearTimeout(timer);
        done(m as { url: string; pid: number });
      });
      holder.once('exit', (code, signal) => {
        clearTimeout(timer);
        fail(new Error(`exited before it was ready (${signal ?? `code ${code}`})`));
      });
    });
    holder.unref();
    return { ...ready, holderPid: holder.pid! };
  } catch (err) {
    if (holder.exitCode === null) holder.kill('SIGKILL');
    throw new Error(`the suite's ClickHouse: ${(err as Error).message}\n${readFileSync(logPath, 'utf8').slice(-4_000)}`);
  }
}

/** Stops the holder (and so the server); nothing if it is gone already. */
export async function stopSuiteClickHouse(ch: SuiteClickHouse): Promise<void> {
  if (!isHolder(ch.holderPid)) return;
  await stopProcess(ch.holderPid);
}

// A pid from env.json that is alive may since belong to another process: signal only ours.
function isHolder(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('clickhouse-holder');
  } catch {
    return false;
  }
}
