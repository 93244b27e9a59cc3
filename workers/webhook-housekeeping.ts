import { WAITS_IN_CHAIN } from '../domain/webhooks/chain.js';
import { WEBHOOK_DELIVER_QUEUE } from '../domain/webhooks/deliver-job.js';
import { withTransaction } from '../sql/pool.js';
import { defineSchedule } from './job.js';
import { workerEnqueuer } from './webhook-deliver.js';

/**
 * Hourly: events older than WEBHOOK_RETENTION_DAYS leave webhook_events with their deliveries
 * and attempts, unless a delivery of theirs is still pending (it keeps its event until it
 * settles). The retention is at least 2 days, past the default schedule's ~28 h of retries.
 */
export const webhookHousekeepingJob = defineSchedule({
  name: 'webhook.housekeeping',
  schedule: '17 * * * *',
  async handle({ pool, config }) {
    for (;;) {
      const { rowCount } = await pool.query(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT e.id FROM webhook_events e
            WHERE e.created_at < now() - make_interval(days => $1)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
            LIMIT 5000)`,
        [config.webhooks.retentionDays],
      );
      if (!rowCount) return;
    }
  },
});

/**
 * Every minute: a pending delivery at the head of its chain, due for over two minutes and not in
 * flight, gets a job again. Nothing in the normal course leaves one without a job (each is
 * enqueued in the transaction that makes it due: docs/webhooks.md); this covers a job pg-boss
 * gave up on (its own retries exhausted by a long Postgres outage). A duplicate job is harmless:
 * the attempt's begin skips a delivery that is in flight, settled or not at its chain's head.
 */
export const webhookSweepJob = defineSchedule({
  name: 'webhook.sweep',
  schedule: '* * * * *',
  async handle({ boss, pool, config }) {
    const enqueue = workerEnqueuer(boss, config.webhooks);
    await withTransaction(pool, async (c) => {
      const { rows: due } = await c.query<{ id: number }>(
        `SELECT d.id FROM webhook_deliveries d
          WHERE d.status = 'pending' AND coalesce(d.leased_until, '-infinity') < now()
            AND coalesce(d.next_attempt_at, d.created_at) < now() - interval '2 minutes'
            AND NOT ${WAITS_IN_CHAIN}
          ORDER BY d.id LIMIT 1000`,
      );
      if (!due.length) return;
      // Those whose job is still waiting or running (a backlog, not a loss) are left alone: one
      // pass over the queue's live jobs, not one per delivery.
      const { rows: queued } = await c.query<{ id: string }>(
        `SELECT j.data->>'delivery_id' AS id FROM pgboss.job j
          WHERE j.name = $1 AND j.state < 'completed' AND j.data->>'delivery_id' = ANY($2::text[])`,
        [WEBHOOK_DELIVER_QUEUE, due.map((r) => String(r.id))],
      );
      const live = new Set(queued.map((r) => Number(r.id)));
      const rows = due.filter((r) => !live.has(Number(r.id)));
      await enqueue(c, rows.map((r) => ({ deliveryId: Number(r.id) })));
    });
  },
});
