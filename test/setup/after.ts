import { removeStaleClickHouseDirs, stopProcess, testEnv, type TestEnv } from './env.js';
import { stopSuiteClickHouse } from './suite-clickhouse.js';
import { dropTemplateDatabase } from './template-database.js';

/**
 * Runs once after the suite: per-file ClickHouse dirs a crashed file left behind (env.ts), the
 * suite's ClickHouse and template database, and the embedded Postgres before.ts started, if it
 * did (a server left running inside .ci/run's network namespace would be out of reach of every
 * later run).
 */
removeStaleClickHouseDirs();
let env: TestEnv | undefined;
try {
  env = testEnv();
} catch {
  // before.ts did not get as far as writing the file
}
if (env?.clickhouse) await stopSuiteClickHouse(env.clickhouse);
if (env?.templateDatabase) await dropTemplateDatabase(env.postgresAdminUrl, env.templateDatabase);
if (env?.embeddedPostgresPid) await stopProcess(env.embeddedPostgresPid);
