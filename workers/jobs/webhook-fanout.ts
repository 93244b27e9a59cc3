import type { Logger } from 'pino';
import type { DeliveryEnqueuer } from '../../domain/webhooks/deliver-job.js';
import { fanOutBatch } from '../../domain/webhooks/fanout.js';
import { withTransaction, type Pool } from '../../sql/pool.js';
import { startTickLoop } from '../machinery/tick-loop.js';

/**
 * The webhook stage over the event outbox, run continuously like the event pump (a schedule's
 * minute would be the latency floor): a batch per tick (domain/webhooks/fanout.ts), at once again
 * after one that left rows waiting. One worker at a time does it (an advisory lock), so each
 * instance's events become deliveries in outbox order; the others' ticks find the lock taken and
 * wait for the next.
 */
// Batches stay small: a settling attempt of a webhook waits for the fan-out transaction that holds
// its row (chain.ts), so a long one would stall every webhook's deliveries. Bounded in deliveries
// too, not only events (each event makes one per webhook), and shared by the instances waiting
// (domain/webhooks/fair-share.ts).
export const FANOUT_DEFAULTS = { intervalMs: 100, events: 200, deliveries: 2000 } as const;

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
        fanOutBatch(c, FANOUT_DEFAULTS, opts.enqueue),
      );
      if (r?.heads.length) opts.wake();
      return r?.more ?? false;
    },
  });
}
