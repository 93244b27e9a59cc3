import type { Logger } from 'pino';
import type { DeliveryEnqueuer } from '../domain/webhooks/deliver-job.js';
import { fanOutBatch } from '../domain/webhooks/fanout.js';
import { withTransaction, type Pool } from '../sql/pool.js';
import { startTickLoop } from './tick-loop.js';

/**
 * The webhook stage over the event outbox, run continuously like the event pump (a schedule's
 * minute would be the latency floor): a batch per tick (domain/webhooks/fanout.ts), at once again
 * after a full one. One worker at a time does it (an advisory lock), so events become deliveries
 * in outbox order; the others' ticks find the lock taken and wait for the next.
 */
// Batches stay small: a settling attempt of a webhook waits for the fan-out transaction that holds
// its row (chain.ts), so a long one would stall every webhook's deliveries.
export const FANOUT_DEFAULTS = { intervalMs: 100, batchSize: 200 } as const;

export function startWebhookFanout(opts: {
  pool: Pool;
  logger: Logger;
  enqueue: DeliveryEnqueuer;
  /** Wakes this process's delivery consumers after a batch created deliveries. */
  wake: () => void;
}): { stop(): Promise<void> } {
  return startTickLoop({
    logger: opts.logger.child({ job: 'webhook-fanout' }),
    failure: 'webhook fan-out tick failed',
    intervalMs: FANOUT_DEFAULTS.intervalMs,
    async tick() {
      const r = await withTransaction(opts.pool, (c) =>
        fanOutBatch(c, FANOUT_DEFAULTS.batchSize, (tx, ids) => opts.enqueue(tx, ids.map((deliveryId) => ({ deliveryId })))),
      );
      if (r?.heads.length) opts.wake();
      return r?.marked === FANOUT_DEFAULTS.batchSize;
    },
  });
}
