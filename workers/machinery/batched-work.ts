import type PgBoss from 'pg-boss';
import type { JobContext, Stop } from './job-context.js';
import { CONSUMER_STOP_GRACE_MS, consumeJobs } from './job-consumer.js';

/**
 * How a job declared with `batch` (workers/machinery/job.ts) consumes its queue: up to `batch` jobs in hand,
 * handled side by side, fetched again as soon as some are done (polled every half second when the
 * queue is empty), each completed or failed on its own (workers/machinery/job-consumer.ts). pg-boss's
 * defaults (one job per fetch, a 2 s poll) sent about one form mail every 2 s per worker, far
 * behind the submissions a busy form takes (bench/forms). A retryable failure fails only its job.
 */
export function workInBatches<T>(
  boss: PgBoss,
  name: string,
  batch: number,
  parse: (payload: unknown) => T | undefined,
  handle: (data: T, ctx: JobContext) => Promise<void>,
  ctx: JobContext,
): Stop {
  const logger = ctx.logger.child({ queue: name });
  const jobCtx = { ...ctx, logger };
  const consumer = consumeJobs(boss, name, { batchSize: batch, maxActive: batch, pollMs: 500, logger }, async (jobs) =>
    jobs.map(async (job) => {
      const data = parse(job.data);
      if (data === undefined) {
        logger.error({ jobId: job.id, data: job.data }, 'malformed job ignored');
        return;
      }
      await handle(data, jobCtx);
    }),
  );
  return () => consumer.stop(CONSUMER_STOP_GRACE_MS);
}
