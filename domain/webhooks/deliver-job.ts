import type { Client } from '../../sql/pool.js';

/**
 * The delivery job (workers/webhook-deliver.ts): one per attempt of one delivery. Enqueued with
 * the delivery's row (fan-out, replay, retry) or with the outcome of the attempt before it (a
 * retry, the next delivery of a mail's chain), in the same transaction. A duplicate job is
 * harmless: the handler attempts only a pending delivery not in flight and at the head of its
 * chain.
 */
export const WEBHOOK_DELIVER_QUEUE = 'webhook.deliver';
export interface WebhookDeliverJob {
  delivery_id: number;
}

/** Enqueues delivery jobs in the caller's transaction; `at`: not before (a retry's delay). */
export type DeliveryEnqueuer = (c: Client, jobs: ReadonlyArray<{ deliveryId: number; at?: Date }>) => Promise<void>;
