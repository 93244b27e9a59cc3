import type PgBoss from 'pg-boss';
import type { Pool } from '../sql/pool.js';
import { registerHeartbeat } from './heartbeat.js';

/** Every job handler of the worker dyno. Later issues register theirs here. */
export async function registerJobs(boss: PgBoss, pool: Pool, workerId: string): Promise<void> {
  await registerHeartbeat(boss, pool, workerId);
}
