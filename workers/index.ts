import type PgBoss from 'pg-boss';
import { jobQueue } from '../runtime/queue.js';
import { registerJob, type JobContext } from './job.js';
import { JOBS } from './jobs.js';

/*
 * What the worker process (runtime/worker.ts) takes from workers/: the jobs' registration, and
 * the pieces of the process that are not pg-boss jobs (the event pump, the send lease, the
 * soft-bounce notifier the inbound listener calls).
 */
export { startEventPump } from './event-pump.js';
export { startSendLease } from './send-lease.js';
export { softBounceNotifier } from './soft-bounce-check.js';
export type { JobContext } from './job.js';

/** Register every job of the list (workers/jobs.ts) in this worker. */
export async function registerJobs(boss: PgBoss, deps: Omit<JobContext, 'boss' | 'queue'>): Promise<void> {
  const ctx: JobContext = { ...deps, boss, queue: jobQueue(deps.config.databaseUrl!) };
  for (const def of JOBS) await registerJob(boss, def, ctx);
}
