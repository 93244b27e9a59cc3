import type PgBoss from 'pg-boss';
import { deliveryClock } from '../../domain/webhooks/clock.js';
import { backlogJobs } from '../../domain/webhooks/fair-share.js';
import { deliveryJobExpiry, WEBHOOK_DELIVER_QUEUE, type DeliveryEnqueuer, type WebhookDeliverJob } from '../../domain/webhooks/deliver-job.js';
import { isRowId } from '../../domain/row-id.js';
import { receiverPolicy } from '../../domain/webhooks/receiver-address.js';
import type { WebhookSettings } from '../../domain/webhooks/settings.js';
import { createPool, withTransaction } from '../../sql/pool.js';
import { defineJob } from '../machinery/job.js';
import { CONSUMER_STOP_GRACE_MS, consumeJobs, type JobConsumer } from '../machinery/job-consumer.js';
import { deliverBatch, releaseDrains, type DeliverDeps } from './webhook-drain.js';
import { startWebhookFanout } from './webhook-fanout.js';

export type { DeliverDeps } from './webhook-drain.js';

/**
 * Webhook delivery (docs/webhooks.md): one pg-boss job per attempt of a delivery
 * (domain/webhooks/delivery.ts does the attempts' two transactions; this module the HTTP calls
 * between them and the jobs that follow). Its consumers fetch in batches (one fetch reads every
 * waiting job, so few large ones) and hand each webhook's deliveries to that webhook's drain
 * (workers/jobs/webhook-drain.ts), which attempts them together, a transaction pair per round,
 * not per attempt; the per-webhook limit (WEBHOOK_CONCURRENCY) is kept in Postgres, across
 * workers. The worker that runs these also runs the webhook stage over the event outbox
 * (workers/jobs/webhook-fanout.ts), which creates the deliveries.
 */
const BATCH = 250;
/** Jobs in hand at most: in flight, or being begun (held deliveries' jobs are done). */
const MAX_ACTIVE = 500;

function parse(payload: unknown): WebhookDeliverJob | undefined {
  const id = (payload as { delivery_id?: unknown } | null)?.delivery_id;
  return isRowId(id) ? { delivery_id: id } : undefined;
}

/** Jobs enqueued by the worker, in the caller's transaction: a retry at its time, with an expiry past the attempt's timeout. */
export function workerEnqueuer(boss: PgBoss, settings: WebhookSettings): DeliveryEnqueuer {
  return async (c, jobs) => {
    if (!jobs.length) return;
    await boss.insert(
      jobs.map((j) => ({
        name: WEBHOOK_DELIVER_QUEUE,
        data: { delivery_id: j.deliveryId },
        ...(j.at ? { startAfter: j.at } : {}),
        ...(j.priority ? { priority: j.priority } : {}),
        expireInSeconds: deliveryJobExpiry(settings.timeoutSeconds),
      })),
      { db: { executeSql: (text: string, values: unknown[]) => c.query(text, values) } },
    );
  };
}

export const webhookDeliverJob = defineJob<WebhookDeliverJob>({
  name: WEBHOOK_DELIVER_QUEUE,
  // Retries here are for the job itself (Postgres unavailable, a killed worker's expired job);
  // the delivery's own retries are new jobs on WEBHOOK_RETRY_SCHEDULE.
  policy: { retryLimit: 20, retryDelay: 2, retryBackoff: true, expireInSeconds: 330 },
  parse,
  async work(boss, { config, logger: base }) {
    const settings: WebhookSettings = config.webhooks;
    // Its own connections: attempts must not wait behind the send path's, nor take them.
    const pool = createPool(config.databaseUrl!, { max: 10, application: 'cartero-webhooks', customPlans: true });
    const logger = base.child({ queue: WEBHOOK_DELIVER_QUEUE });
    let consumer: JobConsumer | undefined;
    const deps: DeliverDeps = { pool, settings, receivers: receiverPolicy(config), logger, enqueue: workerEnqueuer(boss, settings), now: deliveryClock(settings.clockOffsetSeconds), wake: () => consumer?.wake() };
    consumer = consumeJobs(boss, WEBHOOK_DELIVER_QUEUE, { batchSize: BATCH, maxActive: MAX_ACTIVE, pollMs: 500, logger }, async (jobs) => {
      const ids = jobs.map((job) => parse(job.data));
      jobs.forEach((job, i) => ids[i] || logger.error({ jobId: job.id, data: job.data }, 'malformed job ignored'));
      const outcomes = await deliverBatch(deps, ids.filter((d) => d !== undefined).map((d) => d.delivery_id));
      return ids.map((d) => (d && outcomes.get(d.delivery_id)) || Promise.resolve());
    });
    const fanout = startWebhookFanout({ pool, logger: base, enqueue: deps.enqueue, wake: deps.wake });
    return async () => {
      await fanout.stop();
      // Held deliveries get their jobs back; attempts in flight settle for a few seconds, the
      // jobs of the rest are failed and retried (the begin waits for their leases to lapse).
      await consumer!.stop(CONSUMER_STOP_GRACE_MS, async () => {
        const held = await releaseDrains(deps);
        try {
          // With their backlog's priority: given back all at once, they must not go before other instances' work.
          await withTransaction(pool, async (c) => deps.enqueue(c, await backlogJobs(c, held)));
        } catch (err) {
          logger.warn({ err, held: held.length }, 'could not give held deliveries their jobs back; the minute sweep will');
        }
      });
      await pool.end();
    };
  },
});
