import { removeStaleClickHouseDirs, stopProcess, testEnv } from './env.js';

/**
 * Runs once after the suite: per-file ClickHouse dirs a crashed file left behind (env.ts), and the
 * embedded Postgres before.ts started, if it did (a server left running inside .ci/run's network
 * namespace would be out of reach of every later run).
 */
removeStaleClickHouseDirs();
let pid: number | undefined;
try {
  pid = testEnv().embeddedPostgresPid;
} catch {
  // before.ts did not get as far as writing the file
}
if (pid) await stopProcess(pid);
