import type PgBoss from 'pg-boss';
import { jobQueue } from './machinery/queue.js';
import { registerJob, type JobContext, type Stop } from './machinery/job.js';
import { JOBS } from './jobs/index.js';

/*
 * What the worker process (runtime/worker.ts) takes from workers/: the jobs' registration, and
 * the pieces of the process that are not pg-boss jobs (the event pump, the DMARC shipper, the send
 * lease, the send job's render threads, the soft-bounce notifier the inbound listener calls).
 */
export { startEventPump } from './jobs/event-pump.js';
export { startDmarcShipper } from './jobs/dmarc-ship.js';
export { startSendLease } from './machinery/send-lease.js';
export { renderThreads } from './jobs/send-mail/render-threads.js';
export { softBounceNotifier } from './jobs/soft-bounce-check.js';
export type { JobContext } from './machinery/job.js';

/**
 * Register every job of the list (workers/jobs/index.ts) in this worker. Resolves to the jobs' own
 * stop (consumers that are not pg-boss `work`), to run before the queue stops.
 */
export async function registerJobs(boss: PgBoss, deps: Omit<JobContext, 'boss' | 'queue'>): Promise<Stop> {
  const ctx: JobContext = { ...deps, boss, queue: jobQueue(deps.config.databaseUrl!) };
  const stops: Stop[] = [];
  for (const def of JOBS) {
    const stop = await registerJob(boss, def, ctx);
    if (stop) stops.push(stop);
  }
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}
