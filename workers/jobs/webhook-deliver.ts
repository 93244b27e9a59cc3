import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { deliveryClock } from '../../domain/webhooks/clock.js';
import { beginAttempts, markSpilled, settleAttempts, takeSpilled, type Attempt, type Begun } from '../../domain/webhooks/delivery.js';
import { backlogJobs } from '../../domain/webhooks/fair-share.js';
import { deliveryJobExpiry, WEBHOOK_DELIVER_QUEUE, type DeliveryEnqueuer, type WebhookDeliverJob } from '../../domain/webhooks/deliver-job.js';
import { isRowId } from '../../domain/row-id.js';
import { postEvent } from '../../domain/webhooks/post.js';
import { receiverPolicy, type ReceiverPolicy } from '../../domain/webhooks/receiver-address.js';
import type { WebhookSettings } from '../../domain/webhooks/settings.js';
import { signedHeaders } from '../../domain/webhooks/signing.js';
import { createPool, withTransaction, type Pool } from '../../sql/pool.js';
import { defineJob } from '../machinery/job.js';
import { CONSUMER_STOP_GRACE_MS, consumeJobs, type JobConsumer } from '../machinery/job-consumer.js';
import { startWebhookFanout } from './webhook-fanout.js';

/**
 * Webhook delivery (docs/webhooks.md): one pg-boss job per attempt of a delivery
 * (domain/webhooks/delivery.ts does the attempts' two transactions; this module the HTTP calls
 * between them and the jobs that follow). Its consumers fetch in batches (one fetch reads every
 * waiting job, so few large ones) and hand each webhook's deliveries to that webhook's drain,
 * which attempts them together, a transaction pair per round, not per attempt; the per-webhook limit (WEBHOOK_CONCURRENCY) is kept in Postgres, across
 * workers. The worker that runs these also runs the webhook stage over the event outbox
 * (workers/jobs/webhook-fanout.ts), which creates the deliveries.
 */
const BATCH = 250;
/** Jobs in hand at most: in flight, or being begun (held deliveries' jobs are done). */
const MAX_ACTIVE = 500;

function parse(payload: unknown): WebhookDeliverJob | undefined {
  const id = (payload as { delivery_id?: unknown } | null)?.delivery_id;
  return isRowId(id) ? { delivery_id: id } : undefined;
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
        ...(j.priority ? { priority: j.priority } : {}),
        expireInSeconds: deliveryJobExpiry(settings.timeoutSeconds),
      })),
      { db: { executeSql: (text: string, values: unknown[]) => c.query(text, values) } },
    );
  };
}

export interface DeliverDeps {
  pool: Pool;
  settings: WebhookSettings;
  /** Which receivers may be connected to (WEBHOOK_ALLOW_PRIVATE, the service's own listeners). */
  receivers: ReceiverPolicy;
  logger: Logger;
  enqueue: DeliveryEnqueuer;
  now: () => Date;
  /** Wakes this process's consumers: a chain's next delivery was just enqueued. */
  wake: () => void;
}

/**
 * The deliveries of a batch of jobs, one promise per delivery id: resolved once the delivery is
 * settled, skipped, or held by its webhook's drain (below); rejected when its transaction failed
 * (pg-boss retries the job). A delivery that no longer exists resolves at once.
 */
async function deliverBatch(deps: DeliverDeps, deliveryIds: readonly number[]): Promise<Map<number, Promise<void>>> {
  const { rows } = await deps.pool.query<{ id: string; webhook_id: string }>({
    name: 'webhook_deliver_owners',
    text: 'SELECT id, webhook_id FROM webhook_deliveries WHERE id = ANY($1::bigint[])',
    values: [[...new Set(deliveryIds)]],
  });
  return new Map(rows.map((r) => [Number(r.id), drainOf(deps, Number(r.webhook_id)).add(Number(r.id))]));
}

/**
 * One drain per webhook in this process: the deliveries of every job the consumer fetched for
 * that webhook. It begins as many as the room WEBHOOK_CONCURRENCY leaves, in one transaction,
 * POSTs them side by side and settles them in one transaction, and begins more whenever room
 * frees up, so a slow answer holds only its own slot. Its begins and settles go one at a time,
 * so they never hold pooled connections waiting for its row lock (a few busy webhooks once took
 * every connection).
 *
 * Deliveries beyond the room are *held*: kept here, in order, and begun as room frees, while
 * their jobs complete at once. So a webhook whose receiver is slow holds at most
 * WEBHOOK_CONCURRENCY jobs of the consumer, and the other webhooks' jobs keep flowing. A held
 * delivery's durable state is its row (pending, due), so memory holds at most WEBHOOK_HOLD_MAX of
 * them per webhook: past that, deliveries are let go (their jobs done too), marked in the table,
 * and taken back, oldest first, as the held ones drain; a new drain looks for marked ones first,
 * in case a stopped worker let some go. A graceful stop gives each held delivery a job again, and
 * the minute sweep (workers/jobs/webhook-housekeeping.ts) covers a crash.
 */
interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}
interface Drain {
  add(deliveryId: number): Promise<void>;
  /** Stop beginning: the held deliveries, to give jobs back to (those let go are marked first). */
  release(): Promise<number[]>;
}
const BEGIN_MAX = 100;
const drainsOf = new WeakMap<DeliverDeps, Map<number, Drain>>();

function drainOf(deps: DeliverDeps, webhookId: number): Drain {
  const drains = drainsOf.get(deps) ?? drainsOf.set(deps, new Map()).get(deps)!;
  const existing = drains.get(webhookId);
  if (existing) return existing;
  const { pool, settings, enqueue } = deps;
  const waiters = new Map<number, Waiter[]>();
  const toBegin = new Set<number>();
  let inFlight = 0;
  let beginning = false;
  let lane: Promise<unknown> = Promise.resolve();
  // The webhook's transactions, one at a time.
  const inLane = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = lane.then(fn, fn);
    lane = run.catch(() => {});
    return run;
  };
  const finish = (ids: Iterable<number>, how: (w: Waiter) => void) => {
    for (const id of ids) {
      for (const w of waiters.get(id) ?? []) how(w);
      waiters.delete(id);
    }
    if (!waiters.size && !inFlight && !beginning && !refilling && !marking && !toBegin.size) drains.delete(webhookId);
  };
  // Deliveries let go past holdMax are marked in the table (markSpilled) and taken back from it
  // (takeSpilled) once the held ones are down to half. `spilled`: marked ones may exist; a new
  // drain assumes so, which brings back what a stopped or crashed worker let go.
  let spilled = true;
  let refilling = false;
  let toMark: number[] = [];
  let marking: Promise<void> | undefined;
  function markLater(id: number): void {
    toMark.push(id);
    marking ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      while (toMark.length) {
        const ids = toMark;
        toMark = [];
        try {
          await markSpilled(pool, ids);
        } catch (err) {
          // Unmarked, they have neither a job nor a mark: the minute sweep gives them jobs.
          deps.logger.warn({ err, webhookId, deliveries: ids.length }, 'could not mark deliveries let go; the minute sweep gives them jobs');
        }
      }
      spilled = true;
      marking = undefined;
      void beginMore();
    });
  }
  async function refill(): Promise<void> {
    refilling = true;
    spilled = false;
    const want = settings.holdMax - toBegin.size;
    try {
      const taken = await takeSpilled(pool, webhookId, want);
      if (taken.length >= want) spilled = true;
      for (const id of taken) toBegin.add(id);
    } catch (err) {
      // Tried again at the next begin or settle, not at once (Postgres may be down).
      spilled = true;
      refilling = false;
      deps.logger.warn({ err, webhookId }, 'could not take back deliveries let go; tried again at the next begin');
      return;
    }
    refilling = false;
    void beginMore();
  }
  // Held: beyond the room, their jobs done; begun when an attempt of ours settles. (Only the few
  // with waiters are visited: a held backlog can be long.)
  const hold = () => finish([...waiters.keys()].filter((id) => toBegin.has(id)), (w) => w.resolve());
  let released = false;

  async function beginMore(): Promise<void> {
    if (released) return;
    if (spilled && !refilling && !marking && toBegin.size <= settings.holdMax / 2) void refill();
    if (beginning || !toBegin.size) return;
    if (inFlight >= settings.concurrency) return hold();
    beginning = true;
    // As many as this worker's room: beyond it the begin could only overflow them back.
    const ids: number[] = [];
    for (const id of toBegin) if (ids.push(id) >= Math.min(BEGIN_MAX, settings.concurrency - inFlight)) break;
    for (const id of ids) toBegin.delete(id);
    let begun: Begun;
    try {
      begun = await inLane(() => withTransaction(pool, async (c) => {
        const b = await beginAttempts(c, webhookId, ids, settings, deps.now());
        // Beyond the room: begun again when one of ours settles; with none of ours in flight
        // (other workers hold the room), a job a moment later instead.
        const parked = b.attempts.length || inFlight ? [] : b.overflow;
        const soon = new Date(Date.now() + 250);
        await enqueue(c, [
          ...b.later.map((l) => ({ deliveryId: l.deliveryId, at: l.at })),
          ...b.next.map((id) => ({ deliveryId: id })),
          ...parked.map((id) => ({ deliveryId: id, at: soon })),
        ]);
        return { ...b, overflow: parked.length ? [] : b.overflow };
      }));
    } catch (err) {
      beginning = false;
      // Jobs with waiters fail and pg-boss retries them (with its limits); held ones (no job) are
      // left to the minute sweep, which gives them jobs, rather than taken back here at once: a
      // begin that keeps failing must not turn into a loop.
      const held = ids.filter((id) => !waiters.has(id)).length;
      deps.logger.warn({ err, webhookId, deliveries: ids.length, held }, 'could not begin webhook deliveries');
      finish(ids, (w) => w.reject(err));
      void beginMore();
      return;
    }
    beginning = false;
    if (begun.overflow.length) {
      // Back at the front: older deliveries first.
      const rest = [...toBegin];
      toBegin.clear();
      for (const id of [...begun.overflow, ...rest]) toBegin.add(id);
    }
    inFlight += begun.attempts.length;
    const leased = new Set(begun.attempts.map((a) => a.deliveryId));
    finish(ids.filter((id) => !leased.has(id) && !toBegin.has(id)), (w) => w.resolve());
    if (begun.attempts.length) void attempt(begun.attempts);
    // Deliveries added meanwhile are begun now; those beyond the room are held until a settle.
    if (begun.overflow.length) hold();
    else void beginMore();
  }

  async function attempt(attempts: Attempt[]): Promise<void> {
    const ids = attempts.map((a) => a.deliveryId);
    try {
      const results = await Promise.all(
        attempts.map(async (a) => ({
          attempt: a,
          outcome: await postEvent({
            url: a.url,
            headers: signedHeaders(a.secrets, a.msgId, new Date(), a.body),
            body: a.body,
            timeoutMs: settings.timeoutSeconds * 1000,
            receivers: deps.receivers,
          }),
        })),
      );
      const settled = await inLane(() => withTransaction(pool, async (c) => {
        const s = await settleAttempts(c, webhookId, results, settings);
        await enqueue(c, [...s.next.map((id) => ({ deliveryId: id })), ...s.retries]);
        return s;
      }));
      if (settled.paused) deps.logger.warn({ webhookId, statusCode: results.at(-1)?.outcome.statusCode }, 'webhook paused after persistent failures');
      if (settled.next.length) deps.wake();
      inFlight -= attempts.length;
      finish(ids, (w) => w.resolve());
    } catch (err) {
      // Unsettled: the leases lapse and pg-boss retries the jobs (held deliveries': the minute
      // sweep); the next begin closes the attempts.
      deps.logger.warn({ err, webhookId, attempts: ids.length }, 'could not settle webhook attempts; they are retried once their leases lapse');
      inFlight -= attempts.length;
      finish(ids, (w) => w.reject(err));
    }
    void beginMore();
  }

  const drain: Drain = {
    add(deliveryId) {
      // Stopping: the job fails, and pg-boss gives it to a worker that is not.
      if (released) return Promise.reject(new Error('worker stopping'));
      // Memory holds enough of this webhook's backlog: this one waits in the table (its row is
      // pending and due, and marked) until the drain takes it back.
      if (toBegin.size >= settings.holdMax && !toBegin.has(deliveryId)) {
        markLater(deliveryId);
        return Promise.resolve();
      }
      const done = new Promise<void>((resolve, reject) => waiters.set(deliveryId, [...(waiters.get(deliveryId) ?? []), { resolve, reject }]));
      toBegin.add(deliveryId);
      void beginMore();
      return done;
    },
    async release() {
      released = true;
      const held = [...toBegin];
      toBegin.clear();
      finish(held, (w) => w.resolve());
      await marking;
      return held;
    },
  };
  drains.set(webhookId, drain);
  return drain;
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
    const pool = createPool(config.databaseUrl!, { max: 10, application: 'cartero-webhooks', customPlans: true });
    const logger = base.child({ queue: WEBHOOK_DELIVER_QUEUE });
    let consumer: JobConsumer | undefined;
    const deps: DeliverDeps = { pool, settings, receivers: receiverPolicy(config), logger, enqueue: workerEnqueuer(boss, settings), now: deliveryClock(settings.clockOffsetSeconds), wake: () => consumer?.wake() };
    consumer = consumeJobs(boss, WEBHOOK_DELIVER_QUEUE, { batchSize: BATCH, maxActive: MAX_ACTIVE, pollMs: 500, logger }, async (jobs) => {
      const ids = jobs.map((job) => parse(job.data));
      jobs.forEach((job, i) => ids[i] || logger.error({ jobId: job.id, data: job.data }, 'malformed job ignored'));
      const outcomes = await deliverBatch(deps, ids.filter((d) => d !== undefined).map((d) => d.delivery_id));
      return ids.map((d) => (d && outcomes.get(d.delivery_id)) || Promise.resolve());
    });
    const fanout = startWebhookFanout({ pool, logger: base, enqueue: deps.enqueue, wake: deps.wake });
    return async () => {
      await fanout.stop();
      // Held deliveries get their jobs back; attempts in flight settle for a few seconds, the
      // jobs of the rest are failed and retried (the begin waits for their leases to lapse).
      await consumer!.stop(CONSUMER_STOP_GRACE_MS, async () => {
        const held = await releaseDrains(deps);
        try {
          // With their backlog's priority: given back all at once, they must not go before other instances' work.
          await withTransaction(pool, async (c) => deps.enqueue(c, await backlogJobs(c, held)));
        } catch (err) {
          logger.warn({ err, held: held.length }, 'could not give held deliveries their jobs back; the minute sweep will');
        }
      });
      await pool.end();
    };
  },
});

/** Every drain of this process stops beginning; the deliveries they held. */
async function releaseDrains(deps: DeliverDeps): Promise<number[]> {
  return (await Promise.all([...(drainsOf.get(deps)?.values() ?? [])].map((d) => d.release()))).flat();
}
