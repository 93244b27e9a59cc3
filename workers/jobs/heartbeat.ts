import { hostname } from 'node:os';
import { defineSchedule } from '../machinery/job.js';

/**
 * A worker proves it is consuming the shared queue by handling this job: the row it writes is
 * what /readyz reports as worker_last_seen_at. Scheduled every minute (pg-boss schedules are
 * deduplicated across workers) and sent once at every worker start.
 */
export const heartbeatJob = defineSchedule({
  name: 'worker.heartbeat',
  schedule: '* * * * *',
  runAtStart: true,
  async handle({ pool, workerId }) {
    await pool.query(
      `INSERT INTO worker_heartbeats (worker_id, hostname, pid, seen_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`,
      [workerId, hostname(), process.pid],
    );
    // Rows of workers gone for a day are noise in the table; they are not needed for readiness.
    await pool.query("DELETE FROM worker_heartbeats WHERE seen_at < now() - interval '1 day'");
  },
});
