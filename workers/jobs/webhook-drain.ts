import type { Logger } from 'pino';
import { beginAttempts, markSpilled, settleAttempts, takeSpilled, type Attempt, type Begun } from '../../domain/webhooks/delivery.js';
import type { DeliveryEnqueuer } from '../../domain/webhooks/deliver-job.js';
import { postEvent } from '../../domain/webhooks/post.js';
import type { ReceiverPolicy } from '../../domain/webhooks/receiver-address.js';
import type { WebhookSettings } from '../../domain/webhooks/settings.js';
import { signedHeaders } from '../../domain/webhooks/signing.js';
import { withTransaction, type Pool } from '../../sql/pool.js';

/**
 * One drain per webhook in this process: the deliveries of every job the consumer
 * (workers/jobs/webhook-deliver.ts) fetched for that webhook. It begins as many as the room
 * WEBHOOK_CONCURRENCY leaves, in one transaction, POSTs them side by side and settles them in one
 * transaction, and begins more whenever room frees up, so a slow answer holds only its own slot.
 * Its begins and settles go one at a time, so they never hold pooled connections waiting for its
 * row lock (a few busy webhooks once took every connection).
 *
 * Deliveries beyond the room are *held*: kept here, in order, and begun as room frees, while
 * their jobs complete at once. So a webhook whose receiver is slow holds at most
 * WEBHOOK_CONCURRENCY jobs of the consumer, and the other webhooks' jobs keep flowing. A held
 * delivery's durable state is its row (pending, due), so memory holds at most WEBHOOK_HOLD_MAX of
 * them per webhook: past that, deliveries are let go (their jobs done too), marked in the table,
 * and taken back, oldest first, as the held ones drain; a new drain looks for marked ones first,
 * in case a stopped worker let some go. A graceful stop gives each held delivery a job again, and
 * the minute sweep (workers/jobs/webhook-housekeeping.ts) covers a crash.
 *
 * A drain's life, in the order of the functions below: `addDelivery` (a job's delivery arrives),
 * `beginMore` (a begin transaction for as many as the room), `attempt` (the POSTs, then the settle
 * transaction), and, around them, `hold` (jobs of deliveries beyond the room are done), the spill
 * (`markLater`, `refill`), `finish` (a delivery's jobs answered; an idle drain is forgotten) and
 * `releaseDrain` (a stopping worker).
 */

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

/** A job waiting on its delivery: resolved (the job completes) or rejected (pg-boss retries it). */
interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** What the consumer sees of a drain. */
interface Drain {
  add(deliveryId: number): Promise<void>;
  /** Stop beginning: the held deliveries, to give jobs back to (those let go are marked first). */
  release(): Promise<number[]>;
}

/** Everything one webhook's drain keeps between its begins and settles. */
interface DrainState {
  readonly deps: DeliverDeps;
  readonly webhookId: number;
  /** This process's drains, the map this one is forgotten from once idle. */
  readonly drains: Map<number, Drain>;
  /** Delivery -> the jobs waiting on it (a duplicate job rides along with the first). */
  readonly waiters: Map<number, Waiter[]>;
  /** Deliveries to begin, oldest first: those just added and those held beyond the room. */
  readonly toBegin: Set<number>;
  /** Attempts begun by this drain and not yet settled: its share of the room. */
  inFlight: number;
  /** A begin is running (one at a time: the next takes what arrived meanwhile). */
  beginning: boolean;
  /** The tail of the webhook's transactions, run one at a time (inLane). */
  lane: Promise<unknown>;
  /**
   * Deliveries let go past holdMax are marked in the table (markSpilled) and taken back from it
   * (takeSpilled) once the held ones are down to half. `spilled`: marked ones may exist; a new
   * drain assumes so, which brings back what a stopped or crashed worker let go.
   */
  spilled: boolean;
  /** A takeSpilled is running. */
  refilling: boolean;
  /** Deliveries let go, to be marked by the next markSpilled. */
  toMark: number[];
  /** The markSpilled loop, while it runs. */
  marking: Promise<void> | undefined;
  /** The worker is stopping: nothing more is begun or taken. */
  released: boolean;
}

/** A begin takes at most this many deliveries, whatever the room. */
const BEGIN_MAX = 100;
const drainsOf = new WeakMap<DeliverDeps, Map<number, Drain>>();

/**
 * The deliveries of a batch of jobs, one promise per delivery id: resolved once the delivery is
 * settled, skipped, or held by its webhook's drain; rejected when its transaction failed
 * (pg-boss retries the job). A delivery that no longer exists resolves at once.
 */
export async function deliverBatch(deps: DeliverDeps, deliveryIds: readonly number[]): Promise<Map<number, Promise<void>>> {
  const { rows } = await deps.pool.query<{ id: string; webhook_id: string }>({
    name: 'webhook_deliver_owners',
    text: 'SELECT id, webhook_id FROM webhook_deliveries WHERE id = ANY($1::bigint[])',
    values: [[...new Set(deliveryIds)]],
  });
  return new Map(rows.map((r) => [Number(r.id), drainOf(deps, Number(r.webhook_id)).add(Number(r.id))]));
}

/** Every drain of this process stops beginning; the deliveries they held. */
export async function releaseDrains(deps: DeliverDeps): Promise<number[]> {
  return (await Promise.all([...(drainsOf.get(deps)?.values() ?? [])].map((d) => d.release()))).flat();
}

/** The webhook's drain in this process, made when it has none (or its last one went idle). */
function drainOf(deps: DeliverDeps, webhookId: number): Drain {
  const drains = drainsOf.get(deps) ?? drainsOf.set(deps, new Map()).get(deps)!;
  const existing = drains.get(webhookId);
  if (existing) return existing;
  const state: DrainState = {
    deps,
    webhookId,
    drains,
    waiters: new Map(),
    toBegin: new Set(),
    inFlight: 0,
    beginning: false,
    lane: Promise.resolve(),
    spilled: true,
    refilling: false,
    toMark: [],
    marking: undefined,
    released: false,
  };
  const drain: Drain = {
    add: (deliveryId) => addDelivery(state, deliveryId),
    release: () => releaseDrain(state),
  };
  drains.set(webhookId, drain);
  return drain;
}

/** A job's delivery joins the drain: its promise answers the job. */
function addDelivery(state: DrainState, deliveryId: number): Promise<void> {
  // Stopping: the job fails, and pg-boss gives it to a worker that is not.
  if (state.released) return Promise.reject(new Error('worker stopping'));
  // Memory holds enough of this webhook's backlog: this one waits in the table (its row is
  // pending and due, and marked) until the drain takes it back.
  if (state.toBegin.size >= state.deps.settings.holdMax && !state.toBegin.has(deliveryId)) {
    markLater(state, deliveryId);
    return Promise.resolve();
  }
  const { waiters } = state;
  const done = new Promise<void>((resolve, reject) => waiters.set(deliveryId, [...(waiters.get(deliveryId) ?? []), { resolve, reject }]));
  state.toBegin.add(deliveryId);
  void beginMore(state);
  return done;
}

/**
 * Begins as many waiting deliveries as the room allows, in one transaction, and starts their
 * attempts; enqueues the jobs the begin decided (retries at their time, chains' next).
 */
async function beginMore(state: DrainState): Promise<void> {
  const { deps, webhookId, toBegin } = state;
  const { settings } = deps;
  if (state.released) return;
  if (state.spilled && !state.refilling && !state.marking && toBegin.size <= settings.holdMax / 2) void refill(state);
  if (state.beginning || !toBegin.size) return;
  if (state.inFlight >= settings.concurrency) return hold(state);
  state.beginning = true;
  // As many as this worker's room: beyond it the begin could only overflow them back.
  const ids: number[] = [];
  for (const id of toBegin) if (ids.push(id) >= Math.min(BEGIN_MAX, settings.concurrency - state.inFlight)) break;
  for (const id of ids) toBegin.delete(id);
  let begun: Begun;
  try {
    begun = await inLane(state, () => withTransaction(deps.pool, async (c) => {
      const b = await beginAttempts(c, webhookId, ids, settings, deps.now());
      // Beyond the room: begun again when one of ours settles; with none of ours in flight
      // (other workers hold the room), a job a moment later instead.
      const parked = b.attempts.length || state.inFlight ? [] : b.overflow;
      const soon = new Date(Date.now() + 250);
      await deps.enqueue(c, [
        ...b.later.map((l) => ({ deliveryId: l.deliveryId, at: l.at })),
        ...b.next.map((id) => ({ deliveryId: id })),
        ...parked.map((id) => ({ deliveryId: id, at: soon })),
      ]);
      return { ...b, overflow: parked.length ? [] : b.overflow };
    }));
  } catch (err) {
    state.beginning = false;
    // Jobs with waiters fail and pg-boss retries them (with its limits); held ones (no job) are
    // left to the minute sweep, which gives them jobs, rather than taken back here at once: a
    // begin that keeps failing must not turn into a loop.
    const held = ids.filter((id) => !state.waiters.has(id)).length;
    deps.logger.warn({ err, webhookId, deliveries: ids.length, held }, 'could not begin webhook deliveries');
    finish(state, ids, (w) => w.reject(err));
    void beginMore(state);
    return;
  }
  state.beginning = false;
  if (begun.overflow.length) {
    // Back at the front: older deliveries first.
    const rest = [...toBegin];
    toBegin.clear();
    for (const id of [...begun.overflow, ...rest]) toBegin.add(id);
  }
  state.inFlight += begun.attempts.length;
  const leased = new Set(begun.attempts.map((a) => a.deliveryId));
  finish(state, ids.filter((id) => !leased.has(id) && !toBegin.has(id)), (w) => w.resolve());
  if (begun.attempts.length) void attempt(state, begun.attempts);
  // Deliveries added meanwhile are begun now; those beyond the room are held until a settle.
  if (begun.overflow.length) hold(state);
  else void beginMore(state);
}

/** POSTs the begun attempts side by side, settles them in one transaction, and frees their room. */
async function attempt(state: DrainState, attempts: Attempt[]): Promise<void> {
  const { deps, webhookId } = state;
  const { settings } = deps;
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
    const settled = await inLane(state, () => withTransaction(deps.pool, async (c) => {
      const s = await settleAttempts(c, webhookId, results, settings);
      await deps.enqueue(c, [...s.next.map((id) => ({ deliveryId: id })), ...s.retries]);
      return s;
    }));
    if (settled.paused) deps.logger.warn({ webhookId, statusCode: results.at(-1)?.outcome.statusCode }, 'webhook paused after persistent failures');
    if (settled.next.length) deps.wake();
    state.inFlight -= attempts.length;
    finish(state, ids, (w) => w.resolve());
  } catch (err) {
    // Unsettled: the leases lapse and pg-boss retries the jobs (held deliveries': the minute
    // sweep); the next begin closes the attempts.
    deps.logger.warn({ err, webhookId, attempts: ids.length }, 'could not settle webhook attempts; they are retried once their leases lapse');
    state.inFlight -= attempts.length;
    finish(state, ids, (w) => w.reject(err));
  }
  void beginMore(state);
}

/** The webhook's transactions, one at a time, so a drain never holds two pooled connections waiting on its row lock. */
function inLane<T>(state: DrainState, fn: () => Promise<T>): Promise<T> {
  const run = state.lane.then(fn, fn);
  state.lane = run.catch(() => {});
  return run;
}

/**
 * Held: beyond the room, their jobs done; begun when an attempt of ours settles. (Only the few
 * with waiters are visited: a held backlog can be long.)
 */
function hold(state: DrainState): void {
  finish(state, [...state.waiters.keys()].filter((id) => state.toBegin.has(id)), (w) => w.resolve());
}

/** Answers the jobs waiting on these deliveries; a drain left with nothing to do is forgotten. */
function finish(state: DrainState, ids: Iterable<number>, how: (w: Waiter) => void): void {
  const { waiters } = state;
  for (const id of ids) {
    for (const w of waiters.get(id) ?? []) how(w);
    waiters.delete(id);
  }
  if (!waiters.size && !state.inFlight && !state.beginning && !state.refilling && !state.marking && !state.toBegin.size) state.drains.delete(state.webhookId);
}

/** A delivery let go past holdMax: marked in the table (batched, on the next turn) so the drain can take it back. */
function markLater(state: DrainState, id: number): void {
  const { deps, webhookId } = state;
  state.toMark.push(id);
  state.marking ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
    while (state.toMark.length) {
      const ids = state.toMark;
      state.toMark = [];
      try {
        await markSpilled(deps.pool, ids);
      } catch (err) {
        // Unmarked, they have neither a job nor a mark: the minute sweep gives them jobs.
        deps.logger.warn({ err, webhookId, deliveries: ids.length }, 'could not mark deliveries let go; the minute sweep gives them jobs');
      }
    }
    state.spilled = true;
    state.marking = undefined;
    void beginMore(state);
  });
}

/** Takes back, oldest first, deliveries let go (marked), up to holdMax held. */
async function refill(state: DrainState): Promise<void> {
  const { deps, webhookId, toBegin } = state;
  state.refilling = true;
  state.spilled = false;
  const want = deps.settings.holdMax - toBegin.size;
  try {
    const taken = await takeSpilled(deps.pool, webhookId, want);
    if (taken.length >= want) state.spilled = true;
    for (const id of taken) toBegin.add(id);
  } catch (err) {
    // Tried again at the next begin or settle, not at once (Postgres may be down).
    state.spilled = true;
    state.refilling = false;
    deps.logger.warn({ err, webhookId }, 'could not take back deliveries let go; tried again at the next begin');
    return;
  }
  state.refilling = false;
  void beginMore(state);
}

/** The worker stops: nothing more is begun; the held deliveries, once those let go are marked. */
async function releaseDrain(state: DrainState): Promise<number[]> {
  state.released = true;
  const held = [...state.toBegin];
  state.toBegin.clear();
  finish(state, held, (w) => w.resolve());
  await state.marking;
  return held;
}
