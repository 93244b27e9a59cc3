import type { Client } from '../../sql/pool.js';
import { WEBHOOK_DELIVER_QUEUE } from './deliver-job.js';

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
 * - the delivery queue (pg-boss fetches by priority, then age): a job's priority is its delivery's
 *   start-time fair queuing tag (below), so a delivery of an idle instance goes before all but
 *   one step of a busy one's oldest work.
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

/**
 * The delivery queue's order across instances: start-time fair queuing. Each delivery the
 * fan-out writes gets a tag: its instance's deliveries are numbered on from the later of the
 * queue's virtual time (the tag of the next job to be handed out) and where that instance's previous tags ended.
 * A busy instance's tags run far ahead of the virtual time; an idle instance's first delivery is
 * tagged at the virtual time itself, so it is fetched after at most one step of the busy one's
 * oldest work, never behind its whole backlog. Within an instance tags only grow, so its own
 * deliveries keep their order and none waits for ever (a count-based priority, fixed when the job
 * was made, let newer jobs overtake older ones and starved them while work kept coming).
 *
 * A job's pg-boss priority (higher first, then older) is minus its tag in steps of PRIORITY_STEP.
 * Jobs that continue work under way (the next of a chain, a retry, a manual retry) keep 0, ahead
 * of every tag: an instance has at most its webhooks' WEBHOOK_CONCURRENCY of those at a time.
 */
export const PRIORITY_STEP = 250;

/** The pg-boss priority of a tagged delivery's job (an int4: tags reach it after 5 * 10^11 deliveries). */
export function priorityOf(tag: number): number {
  return -Math.floor(tag / PRIORITY_STEP);
}

/**
 * The queue's virtual time: the tag of the job pg-boss would hand out next (the highest priority
 * of the jobs ready now, each priority the lower edge of its step). Only queued work counts: a
 * delivery waiting for a retry, or held by a worker, does not (a receiver down for days would
 * otherwise hold the time back, and every instance's history with it). With nothing queued, where
 * the furthest instance's tags ended, so time never runs backwards. Read with the service role.
 */
export async function virtualTime(c: Pick<Client, 'query'>): Promise<number> {
  const { rows } = await c.query<{ v: string | number | null }>({
    name: 'webhook_fair_virtual_time',
    text: `SELECT COALESCE(
              (SELECT -max(priority)::bigint * $2 FROM pgboss.job
                WHERE name = $1 AND state < 'active' AND start_after <= now() AND priority < 0),
              (SELECT max(next_tag) FROM webhook_fair_clock), 0) AS v`,
    values: [WEBHOOK_DELIVER_QUEUE, PRIORITY_STEP],
  });
  return Number(rows[0]!.v);
}

/**
 * Tags for new deliveries of these instances, in the order given (the fan-out's insert order),
 * from virtual time `v` on, and each instance's clock moved past them. The fan-out is the one writer (its stage lock), so
 * read, number and write need no more locking than that.
 */
export async function assignTags(c: Client, instanceIds: readonly string[], v: number): Promise<number[]> {
  if (!instanceIds.length) return [];
  const distinct = [...new Set(instanceIds.map(String))];
  const { rows } = await c.query<{ instance_id: string; next_tag: string | number }>({
    name: 'webhook_fair_clock_read',
    text: 'SELECT instance_id::text AS instance_id, next_tag FROM webhook_fair_clock WHERE instance_id = ANY($1::bigint[])',
    values: [distinct],
  });
  const next = new Map(rows.map((r) => [r.instance_id, Math.max(v, Number(r.next_tag))]));
  const tags = instanceIds.map((id) => {
    const key = String(id);
    const tag = next.get(key) ?? v;
    next.set(key, tag + 1);
    return tag;
  });
  await c.query({
    name: 'webhook_fair_clock_write',
    text: `INSERT INTO webhook_fair_clock (instance_id, next_tag) SELECT * FROM unnest($1::bigint[], $2::bigint[])
           ON CONFLICT (instance_id) DO UPDATE SET next_tag = excluded.next_tag`,
    values: [distinct, distinct.map((id) => next.get(id)!)],
  });
  return tags;
}

/**
 * Jobs for deliveries already written (the jobs a stopping worker gives back to the deliveries it
 * held, the sweep, a replay): each with the priority of its tag; an untagged one (a replay's,
 * or written before tags) counts as the virtual time `now`.
 */
export async function backlogJobs(c: Client, deliveryIds: readonly number[], now?: number): Promise<Array<{ deliveryId: number; priority: number }>> {
  if (!deliveryIds.length) return [];
  const { rows } = await c.query<{ id: string | number; fair_tag: string | number | null }>({
    name: 'webhook_fair_tags_of',
    text: 'SELECT id, fair_tag FROM webhook_deliveries WHERE id = ANY($1::bigint[])',
    values: [[...new Set(deliveryIds)]],
  });
  const tag = new Map(rows.map((r) => [Number(r.id), r.fair_tag === null ? null : Number(r.fair_tag)]));
  const untagged = rows.some((r) => r.fair_tag === null);
  const v = untagged ? (now ?? (await virtualTime(c))) : 0;
  return deliveryIds.map((deliveryId) => ({ deliveryId, priority: priorityOf(tag.get(deliveryId) ?? v) }));
}
