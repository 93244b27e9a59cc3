import type PgBoss from 'pg-boss';
import type { JobContext } from './job.js';

/**
 * How a job declared with `batch` (workers/job.ts) consumes its queue: `batch` jobs per fetch,
 * polled every half second, handled side by side, and fetched again at once after a full batch.
 * pg-boss's defaults (one job per fetch, a 2 s poll) sent about one form mail every 2 s per
 * worker, far behind the submissions a busy form takes (bench/forms). A retryable failure of one
 * job fails the batch, so pg-boss retries every job of it: such jobs are idempotent (a mail
 * already accepted is not sent again, a dataset feed of equal values changes nothing), so the
 * ones that had succeeded do nothing the second time.
 */
export async function workInBatches<T>(
  boss: PgBoss,
  name: string,
  batch: number,
  parse: (payload: unknown) => T | undefined,
  handle: (data: T, ctx: JobContext) => Promise<void>,
  ctx: JobContext,
): Promise<void> {
  const logger = ctx.logger.child({ queue: name });
  const jobCtx = { ...ctx, logger };
  let workerId: string | undefined;
  workerId = await boss.work<unknown>(name, { batchSize: batch, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    const outcomes = await Promise.allSettled(
      jobs.map(async (job) => {
        const data = parse(job.data);
        if (data === undefined) {
          logger.error({ jobId: job.id, data: job.data }, 'malformed job ignored');
          return;
        }
        await handle(data, jobCtx);
      }),
    );
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    if (jobs.length === batch && workerId) boss.notifyWorker(workerId);
  });
}
