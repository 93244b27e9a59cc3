import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import type { Pool } from '../sql/pool.js';

export const HEARTBEAT_QUEUE = 'worker.heartbeat';

/**
 * A worker proves it is consuming the shared queue by handling this job: the row it writes is
 * what /readyz reports as worker_last_seen_at. Scheduled every minute (pg-boss schedules are
 * deduplicated across workers) and sent once at every worker start.
 */
export async function registerHeartbeat(boss: PgBoss, pool: Pool, workerId: string): Promise<void> {
  await boss.work(HEARTBEAT_QUEUE, async () => {
    await pool.query(
      `INSERT INTO worker_heartbeats (worker_id, hostname, pid, seen_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`,
      [workerId, hostname(), process.pid],
    );
    // Rows of workers gone for a day are noise in the table; they are not needed for readiness.
    await pool.query("DELETE FROM worker_heartbeats WHERE seen_at < now() - interval '1 day'");
  });
  await boss.schedule(HEARTBEAT_QUEUE, '* * * * *');
  await boss.send(HEARTBEAT_QUEUE, {});
}
