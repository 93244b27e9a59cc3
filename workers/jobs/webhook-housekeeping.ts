import { WAITS_IN_CHAIN } from '../../domain/webhooks/chain.js';
import { WEBHOOK_DELIVER_QUEUE } from '../../domain/webhooks/deliver-job.js';
import { backlogJobs } from '../../domain/webhooks/fair-share.js';
import { withTransaction, type Client } from '../../sql/pool.js';
import { defineSchedule } from '../machinery/job.js';
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

/** Deliveries the sweep looks at per transaction, and at most per run (it runs every minute). */
const SWEEP_PAGE = 1000;
const SWEEP_MAX_PER_RUN = 50_000;

/**
 * Every minute: a pending delivery at the head of its chain, due for over two minutes and not in
 * flight, gets a job again. Nothing in the normal course leaves one without a job (each is
 * enqueued in the transaction that makes it due: docs/webhooks.md); this covers a job pg-boss
 * gave up on (its own retries exhausted by a long Postgres outage), and deliveries a worker held
 * in memory when it crashed (their jobs were completed when they were held). A duplicate job is
 * harmless: the attempt's begin skips a delivery that is in flight, settled or not at its chain's
 * head.
 *
 * It pages through the due deliveries by id, so those whose job is still waiting (a backlog, not
 * a loss) do not hide the lost ones behind them, and a crash's thousands of held deliveries come
 * back in one run, not a thousand a minute.
 *
 * Deliveries a drain let go past WEBHOOK_HOLD_MAX (`spilled`) are its to take back, oldest first,
 * as its held ones drain: a job each would only have them marked again, up to a webhook's whole
 * backlog every minute. A webhook with marked deliveries gets one job, for its oldest, which
 * starts a drain where none runs (a crash, a stop) and is harmless where one does.
 */
export const webhookSweepJob = defineSchedule({
  name: 'webhook.sweep',
  schedule: '* * * * *',
  async handle({ boss, pool, config }) {
    const enqueue = workerEnqueuer(boss, config.webhooks);
    let after = 0;
    for (let seen = 0; seen < SWEEP_MAX_PER_RUN; seen += SWEEP_PAGE) {
      const page = await withTransaction(pool, async (c) => {
        const { rows: due } = await c.query<{ id: number }>(
          `SELECT d.id FROM webhook_deliveries d
            WHERE d.status = 'pending' AND NOT d.spilled AND d.id > $1 AND coalesce(d.leased_until, '-infinity') < now()
              AND coalesce(d.next_attempt_at, d.created_at) < now() - interval '2 minutes'
              AND NOT ${WAITS_IN_CHAIN}
            ORDER BY d.id LIMIT ${SWEEP_PAGE}`,
          [after],
        );
        if (!due.length) return due;
        await enqueueLost(c, due.map((r) => r.id));
        return due;
      });
      if (page.length < SWEEP_PAGE) break;
      after = page.at(-1)!.id;
    }
    await withTransaction(pool, async (c) => {
      const { rows: oldest } = await c.query<{ id: number }>(
        `SELECT DISTINCT ON (webhook_id) id FROM webhook_deliveries
          WHERE spilled AND status = 'pending' AND coalesce(next_attempt_at, created_at) < now() - interval '2 minutes'
          ORDER BY webhook_id, id`,
      );
      await enqueueLost(c, oldest.map((r) => r.id));
    });

    /** Jobs for those of these deliveries that have no waiting or running job (one pass over the queue's live jobs). */
    async function enqueueLost(c: Client, ids: number[]): Promise<void> {
      if (!ids.length) return;
      const { rows: queued } = await c.query<{ id: string }>(
        `SELECT j.data->>'delivery_id' AS id FROM pgboss.job j
          WHERE j.name = $1 AND j.state < 'completed' AND j.data->>'delivery_id' = ANY($2::text[])`,
        [WEBHOOK_DELIVER_QUEUE, ids.map(String)],
      );
      const live = new Set(queued.map((r) => Number(r.id)));
      // A crash's held backlog comes back here: with its priority, behind other instances' work.
      await enqueue(c, await backlogJobs(c, ids.filter((id) => !live.has(id))));
    }
  },
});
