import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { deliveryClock } from '../domain/webhooks/clock.js';
import { beginAttempt, settleAttempt, type Begin } from '../domain/webhooks/delivery.js';
import { WEBHOOK_DELIVER_QUEUE, type DeliveryEnqueuer, type WebhookDeliverJob } from '../domain/webhooks/deliver-job.js';
import { postEvent } from '../domain/webhooks/post.js';
import type { WebhookSettings } from '../domain/webhooks/settings.js';
import { signedHeaders } from '../domain/webhooks/signing.js';
import { createPool, withTransaction, type Pool } from '../sql/pool.js';
import { defineJob } from './job.js';
import { startWebhookFanout } from './webhook-fanout.js';

/**
 * Webhook delivery (docs/webhooks.md): one pg-boss job per attempt of a delivery
 * (domain/webhooks/delivery.ts does the attempt's two transactions; this module the HTTP call
 * between them and the jobs that follow). Its consumers fetch in batches and run a batch's
 * attempts concurrently; the per-webhook limit (WEBHOOK_CONCURRENCY) is kept in Postgres, across
 * workers. The worker that runs these also runs the webhook stage over the event outbox
 * (workers/webhook-fanout.ts), which creates the deliveries.
 */
const BATCH = 50;
const LOOPS = 2;

function parse(payload: unknown): WebhookDeliverJob | undefined {
  const id = (payload as { delivery_id?: unknown } | null)?.delivery_id;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? { delivery_id: id } : undefined;
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
        // A worker killed mid-attempt leaves the job active: retried this long after it started.
        expireInSeconds: settings.timeoutSeconds + 10,
      })),
      { db: { executeSql: (text: string, values: unknown[]) => c.query(text, values) } },
    );
  };
}

export interface DeliverDeps {
  pool: Pool;
  settings: WebhookSettings;
  logger: Logger;
  enqueue: DeliveryEnqueuer;
  now: () => Date;
}

/**
 * Runs `fn` after every earlier call with the same key in this process: a webhook's begins and
 * settles queue here, one at a time, instead of each holding a pooled connection while it waits
 * for the webhook's row lock (a few busy webhooks took every connection and stalled the others).
 */
const queues = new Map<number, Promise<unknown>>();
async function oneAtATime<T>(key: number, fn: () => Promise<T>): Promise<T> {
  const before = queues.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const tail = run.catch(() => {});
  queues.set(key, tail);
  try {
    return await run;
  } finally {
    if (queues.get(key) === tail) queues.delete(key);
  }
}

/** One job: begin, POST, settle; whatever follows is enqueued with the settle. */
export async function deliverOne(deps: DeliverDeps, deliveryId: number): Promise<void> {
  const { pool, settings, enqueue } = deps;
  const { rows } = await pool.query({ name: 'webhook_deliver_owner', text: 'SELECT webhook_id FROM webhook_deliveries WHERE id = $1', values: [deliveryId] });
  if (!rows[0]) return;
  const webhookId = Number(rows[0].webhook_id);
  const begun: Begin = await oneAtATime(webhookId, () => withTransaction(pool, async (c) => {
    const b = await beginAttempt(c, deliveryId, settings, deps.now());
    if (b.kind === 'later') await enqueue(c, [{ deliveryId, at: b.at }]);
    if (b.kind === 'settled') await enqueue(c, b.next.map((id) => ({ deliveryId: id })));
    return b;
  }));
  if (begun.kind !== 'attempt') return;
  const outcome = await postEvent({
    url: begun.url,
    headers: signedHeaders(begun.secrets, begun.msgId, new Date(), begun.body),
    body: begun.body,
    timeoutMs: settings.timeoutSeconds * 1000,
    allowPrivate: settings.allowPrivate,
  });
  const settled = await oneAtATime(webhookId, () => withTransaction(pool, async (c) => {
    const s = await settleAttempt(c, begun, outcome, settings);
    await enqueue(c, [...s.next.map((id) => ({ deliveryId: id })), ...(s.retryAt ? [{ deliveryId, at: s.retryAt }] : [])]);
    return s;
  }));
  if (settled.paused) deps.logger.warn({ webhookId: begun.webhookId, statusCode: outcome.statusCode }, 'webhook paused after persistent failures');
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
    const pool = createPool(config.databaseUrl!, { max: 10, application: 'cartero-webhooks' });
    const logger = base.child({ queue: WEBHOOK_DELIVER_QUEUE });
    const deps: DeliverDeps = { pool, settings, logger, enqueue: workerEnqueuer(boss, settings), now: deliveryClock(settings.clockOffsetSeconds) };
    const workerIds: string[] = [];
    for (let i = 0; i < LOOPS; i++) {
      let id: string | undefined;
      id = await boss.work<unknown>(WEBHOOK_DELIVER_QUEUE, { batchSize: BATCH, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        await Promise.all(
          jobs.map(async (job) => {
            const data = parse(job.data);
            if (!data) return logger.error({ jobId: job.id, data: job.data }, 'malformed job ignored');
            await deliverOne(deps, data.delivery_id);
          }),
        );
        if (jobs.length === BATCH && id) boss.notifyWorker(id);
      });
      workerIds.push(id);
    }
    const fanout = startWebhookFanout({ pool, logger: base, enqueue: deps.enqueue, wake: () => workerIds.forEach((id) => boss.notifyWorker(id)) });
    boss.once('stopped', () => void fanout.stop().then(() => pool.end()));
  },
});
