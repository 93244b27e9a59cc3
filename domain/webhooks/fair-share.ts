import type { Client } from '../../sql/pool.js';

/**
 * Fair scheduling of webhook work across instances (docs/webhooks.md, Fairness): one instance's
 * backlog, however large, must not delay another instance's deliveries by more than about one
 * batch. Two places used to be strict first-in first-out over every instance, and both now take
 * turns:
 *
 * - the webhook stage over the outbox (fanout.ts): each tick serves every instance that has
 *   events waiting (the longest-waiting first, up to `instances`), each with an equal share of the
 *   tick's events and of its deliveries, so an instance with 20 webhooks gets a twentieth of the
 *   events of one with one webhook;
 * - the delivery queue (pg-boss fetches by priority, then age): a job's priority says how far back
 *   its delivery stands in its own instance's backlog, one step per consumer fetch, so a delivery
 *   of an idle instance goes before all but the first fetch of a busy one's.
 */
export interface FanoutBudget {
  /** Outbox rows per tick, across instances. */
  events: number;
  /** Deliveries per tick, across instances (the transaction holds the webhooks' rows: chain.ts). */
  deliveries: number;
}

export interface OutboxShare {
  instanceId: string;
  /** Rows of this instance to take in this tick, oldest first. */
  events: number;
}

/**
 * The instances with outbox rows waiting for the webhook stage, the longest-waiting first (at most
 * `budget.events`: each gets at least one row), and each one's share: an equal part of the tick's
 * events, and of its deliveries divided by the instance's active webhooks (each event becomes one
 * delivery per webhook). Walks the instances by a loose index scan of
 * event_outbox_webhooks_pending_instance_idx: one probe per waiting instance, whatever the backlog.
 */
export async function outboxShares(c: Client, budget: FanoutBudget): Promise<OutboxShare[]> {
  const { rows } = await c.query<{ instance_id: string; hooks: number }>({
    name: 'webhook_fanout_waiting',
    text: `WITH RECURSIVE waiting AS (
             (SELECT instance_id, id FROM event_outbox WHERE NOT webhooks_done ORDER BY instance_id, id LIMIT 1)
             UNION ALL
             SELECT n.instance_id, n.id FROM waiting w CROSS JOIN LATERAL (
               SELECT instance_id, id FROM event_outbox
                WHERE NOT webhooks_done AND instance_id > w.instance_id ORDER BY instance_id, id LIMIT 1) n
           )
           SELECT w.instance_id, (SELECT count(*)::int FROM webhooks h WHERE h.instance_id = w.instance_id AND h.is_active) AS hooks
             FROM waiting w ORDER BY w.id LIMIT $1`,
    values: [budget.events],
  });
  if (!rows.length) return [];
  const events = Math.max(1, Math.floor(budget.events / rows.length));
  const deliveries = Math.floor(budget.deliveries / rows.length);
  return rows.map((r) => ({
    instanceId: r.instance_id,
    // Without active webhooks an event costs a mark (or one test delivery): the events' share.
    events: r.hooks ? Math.max(1, Math.min(events, Math.floor(deliveries / r.hooks))) : events,
  }));
}

/** One priority step per this many deliveries of an instance's backlog: the delivery consumer's fetch. */
export const PRIORITY_STEP = 250;
/** Past this many pending deliveries an instance is simply at the back (bounds the count). */
const BACKLOG_COUNTED = 25_000;

/**
 * Each delivery's job priority (pg-boss fetches higher first, then older): minus its place in its
 * instance's backlog (the instance's pending deliveries older than the first of `deliveryIds`,
 * then its rank among them) in steps of PRIORITY_STEP. A job of an instance with nothing pending
 * is 0 and is fetched before every job of a busy instance but those of its first step. Used by
 * whatever enqueues a backlog: the fan-out, a replay, the jobs a stopping worker gives back to the
 * deliveries it held, the sweep. Jobs that continue work under way (the next of a chain, a retry,
 * a manual retry) keep 0: an instance has at most its webhooks' WEBHOOK_CONCURRENCY of those at a
 * time.
 */
export async function queuePriorities(c: Client, deliveryIds: readonly number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!deliveryIds.length) return out;
  // The count goes through the webhooks: the pending deliveries' partial index leads with webhook_id.
  const { rows } = await c.query<{ id: string; instance_id: string; ahead: number }>({
    name: 'webhook_backlog_ahead',
    text: `WITH h AS (SELECT id, instance_id FROM webhook_deliveries WHERE id = ANY($1::bigint[])),
                q AS (SELECT instance_id, min(id) AS first FROM h GROUP BY instance_id),
                a AS (SELECT q.instance_id, (SELECT count(*)::int FROM (
                        SELECT 1 FROM webhooks w JOIN webhook_deliveries d ON d.webhook_id = w.id AND d.status = 'pending' AND d.id < q.first
                         WHERE w.instance_id = q.instance_id LIMIT $2) z) AS ahead FROM q)
           SELECT h.id, h.instance_id::text, a.ahead FROM h JOIN a USING (instance_id) ORDER BY h.id`,
    values: [[...new Set(deliveryIds)], BACKLOG_COUNTED],
  });
  const rank = new Map<string, number>();
  for (const r of rows) {
    const n = rank.get(r.instance_id) ?? 0;
    rank.set(r.instance_id, n + 1);
    out.set(Number(r.id), -Math.floor((r.ahead + n) / PRIORITY_STEP));
  }
  return out;
}

/** Jobs for these deliveries, each with its backlog priority (queuePriorities). */
export async function backlogJobs(c: Client, deliveryIds: readonly number[]): Promise<Array<{ deliveryId: number; priority: number }>> {
  const priority = await queuePriorities(c, deliveryIds);
  return deliveryIds.map((deliveryId) => ({ deliveryId, priority: priority.get(deliveryId) ?? 0 }));
}
