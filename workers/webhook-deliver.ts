import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { deliveryClock } from '../domain/webhooks/clock.js';
import { beginAttempts, settleAttempts } from '../domain/webhooks/delivery.js';
import { WEBHOOK_DELIVER_QUEUE, type DeliveryEnqueuer, type WebhookDeliverJob } from '../domain/webhooks/deliver-job.js';
import { postEvent } from '../domain/webhooks/post.js';
import type { WebhookSettings } from '../domain/webhooks/settings.js';
import { signedHeaders } from '../domain/webhooks/signing.js';
import { createPool, withTransaction, type Pool } from '../sql/pool.js';
import { defineJob } from './job.js';
import { startWebhookFanout } from './webhook-fanout.js';

/**
 * Webhook delivery (docs/webhooks.md): one pg-boss job per attempt of a delivery
 * (domain/webhooks/delivery.ts does the attempts' two transactions; this module the HTTP calls
 * between them and the jobs that follow). Its consumers fetch in batches and attempt a batch's
 * deliveries together, one transaction pair per webhook; the per-webhook limit (WEBHOOK_CONCURRENCY) is kept in Postgres, across
 * workers. The worker that runs these also runs the webhook stage over the event outbox
 * (workers/webhook-fanout.ts), which creates the deliveries.
 */
const BATCH = 100;
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
  /** Wakes this process's consumers: a chain's next delivery was just enqueued. */
  wake: () => void;
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

/** The deliveries of a batch of jobs, each webhook's attempted together. */
export async function deliverBatch(deps: DeliverDeps, deliveryIds: readonly number[]): Promise<void> {
  const { rows } = await deps.pool.query<{ id: string; webhook_id: string }>({
    name: 'webhook_deliver_owners',
    text: 'SELECT id, webhook_id FROM webhook_deliveries WHERE id = ANY($1::bigint[])',
    values: [[...new Set(deliveryIds)]],
  });
  const byWebhook = new Map<number, number[]>();
  for (const r of rows) byWebhook.set(Number(r.webhook_id), [...(byWebhook.get(Number(r.webhook_id)) ?? []), Number(r.id)]);
  await Promise.all([...byWebhook].map(([webhookId, ids]) => deliverToWebhook(deps, webhookId, ids)));
}

/**
 * Begin, POST, settle; whatever follows is enqueued with the settle. Deliveries beyond the
 * webhook's concurrency are begun again once this batch's attempts have settled; when none of
 * ours is in flight (others hold the room), they get a job a moment later instead.
 */
async function deliverToWebhook(deps: DeliverDeps, webhookId: number, deliveryIds: number[]): Promise<void> {
  const { pool, settings, enqueue } = deps;
  for (let todo = deliveryIds; todo.length; ) {
    const ids = todo;
    const begun = await oneAtATime(webhookId, () => withTransaction(pool, async (c) => {
      const b = await beginAttempts(c, webhookId, ids, settings, deps.now());
      const soon = new Date(Date.now() + 250);
      await enqueue(c, [
        ...b.later.map((l) => ({ deliveryId: l.deliveryId, at: l.at })),
        ...b.next.map((id) => ({ deliveryId: id })),
        ...(b.attempts.length ? [] : b.overflow.map((id) => ({ deliveryId: id, at: soon }))),
      ]);
      return b;
    }));
    if (!begun.attempts.length) return;
    const results = await Promise.all(
      begun.attempts.map(async (attempt) => ({
        attempt,
        outcome: await postEvent({
          url: attempt.url,
          headers: signedHeaders(attempt.secrets, attempt.msgId, new Date(), attempt.body),
          body: attempt.body,
          timeoutMs: settings.timeoutSeconds * 1000,
          allowPrivate: settings.allowPrivate,
        }),
      })),
    );
    const settled = await oneAtATime(webhookId, () => withTransaction(pool, async (c) => {
      const s = await settleAttempts(c, webhookId, results, settings);
      await enqueue(c, [...s.next.map((id) => ({ deliveryId: id })), ...s.retries]);
      return s;
    }));
    if (settled.paused) deps.logger.warn({ webhookId, statusCode: results.at(-1)?.outcome.statusCode }, 'webhook paused after persistent failures');
    if (settled.next.length) deps.wake();
    todo = begun.overflow;
  }
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
    const workerIds: string[] = [];
    const wake = () => workerIds.forEach((id) => boss.notifyWorker(id));
    const deps: DeliverDeps = { pool, settings, logger, enqueue: workerEnqueuer(boss, settings), now: deliveryClock(settings.clockOffsetSeconds), wake };
    for (let i = 0; i < LOOPS; i++) {
      let id: string | undefined;
      id = await boss.work<unknown>(WEBHOOK_DELIVER_QUEUE, { batchSize: BATCH, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        const ids: number[] = [];
        for (const job of jobs) {
          const data = parse(job.data);
          if (data) ids.push(data.delivery_id);
          else logger.error({ jobId: job.id, data: job.data }, 'malformed job ignored');
        }
        await deliverBatch(deps, ids);
        if (jobs.length === BATCH && id) boss.notifyWorker(id);
      });
      workerIds.push(id);
    }
    const fanout = startWebhookFanout({ pool, logger: base, enqueue: deps.enqueue, wake });
    boss.once('stopped', () => void fanout.stop().then(() => pool.end()));
  },
});
