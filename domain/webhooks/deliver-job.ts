import type { Client } from '../../sql/pool.js';

/**
 * The delivery job (workers/jobs/webhook-deliver.ts): one per attempt of one delivery. Enqueued with
 * the delivery's row (fan-out, replay, retry) or with the outcome of the attempt before it (a
 * retry, the next delivery of a mail's chain), in the same transaction. A duplicate job is
 * harmless: the handler attempts only a pending delivery not in flight and at the head of its
 * chain.
 */
export const WEBHOOK_DELIVER_QUEUE = 'webhook.deliver';
export interface WebhookDeliverJob {
  delivery_id: number;
}

/**
 * A delivery job's expiry: past the attempt's timeout, so a worker killed mid-attempt has its job
 * retried this long after it started (the queue's own 330 s covers Postgres outages).
 */
export const deliveryJobExpiry = (timeoutSeconds: number): number => timeoutSeconds + 10;

/**
 * Enqueues delivery jobs in the caller's transaction; `at`: not before (a retry's delay);
 * `priority`: pg-boss's (higher first; default 0), the fan-out's fair share (fair-share.ts).
 */
export type DeliveryEnqueuer = (c: Client, jobs: ReadonlyArray<{ deliveryId: number; at?: Date; priority?: number }>) => Promise<void>;
