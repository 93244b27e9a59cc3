import type { Client } from '../../sql/pool.js';
import { nextInChains, WAITS_IN_CHAIN } from './chain.js';
import type { PostOutcome } from './post.js';
import type { WebhookSettings } from './settings.js';
import { messageId, signingSecrets } from './signing.js';
import { cancelPending } from './webhooks.js';

/**
 * Attempts of a webhook's deliveries, a batch at a time, in two short transactions around the
 * HTTP calls (no lock or connection is held while the receivers answer). Service role: the worker
 * serves every instance. A batch shares its statements, so an attempt costs a few rows, not a
 * few round trips (bench/webhooks: one transaction pair per attempt capped delivery near 400/s).
 *
 * begin: under the webhook's row lock (which serializes it with every other begin and settle of
 * that webhook, not with the fan-out): skip each delivery unless it is pending, due, not in flight
 * and the head of its chain; cancel them if the webhook is paused; lease as many as the webhook's
 * `concurrency` leaves room for (leased_until: timeout + margin), count their attempts and write
 * their rows; the rest are overflow, for the caller to begin again once its own attempts settle.
 * settle: record each outcome on its attempt, its delivery and the webhook (in the order the
 * answers came), pause the webhook if the rules say so, and say what follows (retries, the next
 * delivery of each chain).
 *
 * A worker killed between the two leaves the leases to lapse and the attempts unfinished; pg-boss
 * retries the jobs after their expiry, and the next begin closes those attempts as interrupted.
 */
export interface Attempt {
  attemptId: number;
  attempt: number;
  deliveryId: number;
  webhookId: number;
  mailId: string | null;
  url: string;
  secrets: string[];
  msgId: string;
  body: string;
}

export interface Begun {
  /** Leased: to POST now. */
  attempts: Attempt[];
  /** Not due yet, or in flight elsewhere: a job at `at`. */
  later: Array<{ deliveryId: number; at: Date }>;
  /** Due, but the webhook has `concurrency` attempts in flight. */
  overflow: number[];
  /** Chains' next deliveries, after deliveries cancelled because the webhook is paused. */
  next: number[];
}

const LEASE_MARGIN_SECONDS = 5;

/**
 * Deliveries a drain lets go past WEBHOOK_HOLD_MAX (their jobs done, workers/jobs/webhook-drain.ts):
 * marked, so that a drain of their webhook, in this worker or another, takes them back.
 */
export async function markSpilled(c: Pick<Client, 'query'>, deliveryIds: readonly number[]): Promise<void> {
  await c.query({
    name: 'webhook_mark_spilled',
    text: "UPDATE webhook_deliveries SET spilled = true WHERE id = ANY($1::bigint[]) AND status = 'pending'",
    values: [deliveryIds],
  });
}

/**
 * Up to `limit` of a webhook's marked deliveries, oldest first, unmarked as they are taken (one
 * taker each: SKIP LOCKED). Some may have settled meanwhile: the begin skips them.
 */
export async function takeSpilled(c: Pick<Client, 'query'>, webhookId: number, limit: number): Promise<number[]> {
  const { rows } = await c.query<{ id: string }>({
    name: 'webhook_take_spilled',
    text: `UPDATE webhook_deliveries SET spilled = false
            WHERE id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND spilled ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING id`,
    values: [webhookId, limit],
  });
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

export async function beginAttempts(c: Client, webhookId: number, deliveryIds: readonly number[], settings: WebhookSettings, now: Date): Promise<Begun> {
  const out: Begun = { attempts: [], later: [], overflow: [], next: [] };
  // NO KEY UPDATE: begins of one webhook queue here (its in-flight count), while the fan-out
  // (KEY SHARE) goes on; a begin only looks at older deliveries, which the fan-out never adds.
  const { rows: hooks } = await c.query({
    name: 'webhook_begin_lock',
    text: `SELECT id, url, is_active, secret, previous_secret, previous_secret_expires_at,
                  (SELECT count(*)::int FROM webhook_deliveries b WHERE b.webhook_id = w.id AND b.leased_until > now()) AS busy
             FROM webhooks w WHERE id = $1 FOR NO KEY UPDATE`,
    values: [webhookId],
  });
  const w = hooks[0];
  if (!w) return out;
  const { rows } = await c.query({
    name: 'webhook_begin_deliveries',
    text: `SELECT d.id, d.mail_id, d.status, d.attempts, d.event_id, e.type, e.body,
                  CASE WHEN d.leased_until > now() THEN d.leased_until END AS leased_until,
                  CASE WHEN d.next_attempt_at > now() THEN d.next_attempt_at END AS not_before,
                  ${WAITS_IN_CHAIN} AS waits
             FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
            WHERE d.id = ANY($1::bigint[]) AND d.webhook_id = $2
            ORDER BY d.id`,
    values: [deliveryIds, webhookId],
  });
  const cancel: Array<{ id: number; mailId: string | null }> = [];
  const lease: Array<(typeof rows)[number]> = [];
  let room = settings.concurrency - Number(w.busy);
  for (const d of rows) {
    if (d.status !== 'pending' || d.waits) continue;
    if (d.leased_until) out.later.push({ deliveryId: Number(d.id), at: d.leased_until });
    else if (d.not_before) out.later.push({ deliveryId: Number(d.id), at: d.not_before });
    else if (!w.is_active && d.type !== 'webhook.test') cancel.push({ id: Number(d.id), mailId: d.mail_id });
    else if (room > 0) {
      lease.push(d);
      room--;
    } else out.overflow.push(Number(d.id));
  }
  if (cancel.length) {
    await c.query("UPDATE webhook_deliveries SET status = 'cancelled', finished_at = now() WHERE id = ANY($1::bigint[])", [cancel.map((d) => d.id)]);
    out.next = await nextInChains(c, webhookId, cancel.map((d) => d.mailId));
  }
  if (!lease.length) return out;
  // An attempt left unfinished by a killed worker is closed as interrupted. Only a delivery
  // attempted before can have one, so the first attempts (nearly all) skip the statement; it is
  // left unnamed, planned for its values: a plan cached while the table was empty scanned all of
  // it on every batch once it held a few hundred thousand rows.
  const retried = lease.filter((d) => Number(d.attempts) > 0).map((d) => d.id);
  if (retried.length) {
    await c.query(
      `UPDATE webhook_attempts SET finished = true, error = 'interrupted: the worker stopped during the attempt'
        WHERE delivery_id = ANY($1::bigint[]) AND NOT finished`,
      [retried],
    );
  }
  const { rows: a } = await c.query<{ id: string; delivery_id: string; attempt: number }>({
    name: 'webhook_begin_attempts',
    text: `WITH leased AS (
             UPDATE webhook_deliveries SET attempts = attempts + 1, leased_until = now() + make_interval(secs => $2)
              WHERE id = ANY($1::bigint[])
             RETURNING instance_id, webhook_id, id, event_id, attempts
           )
           INSERT INTO webhook_attempts (instance_id, webhook_id, delivery_id, event_id, attempt)
           SELECT instance_id, webhook_id, id, event_id, attempts FROM leased ORDER BY id RETURNING id, delivery_id, attempt`,
    values: [lease.map((d) => d.id), settings.timeoutSeconds + LEASE_MARGIN_SECONDS],
  });
  const written = new Map(a.map((r) => [Number(r.delivery_id), r]));
  const secrets = signingSecrets(w, now);
  for (const d of lease) {
    const r = written.get(Number(d.id))!;
    out.attempts.push({
      attemptId: Number(r.id),
      attempt: r.attempt,
      deliveryId: Number(d.id),
      webhookId,
      mailId: d.mail_id,
      url: w.url,
      secrets,
      msgId: messageId(d.event_id),
      body: d.body,
    });
  }
  return out;
}

export interface Settled {
  /** Deliveries to enqueue now (the chains' next). */
  next: number[];
  /** Retries due later. */
  retries: Array<{ deliveryId: number; at: Date }>;
  paused: boolean;
}

const isSuccess = (o: PostOutcome) => o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300;

/**
 * Settles a batch of one webhook's attempts. The answers are taken in the order they came
 * (shortest first: the attempts started together), so the webhook's counters and a pause end
 * as if each had been settled alone; a run of successes is settled by one statement.
 */
export async function settleAttempts(
  c: Client,
  webhookId: number,
  results: ReadonlyArray<{ attempt: Attempt; outcome: PostOutcome }>,
  settings: WebhookSettings,
): Promise<Settled> {
  const out: Settled = { next: [], retries: [], paused: false };
  if (!results.length) return out;
  const { rows: hooks } = await c.query({
    name: 'webhook_settle_lock',
    text: 'SELECT id FROM webhooks WHERE id = $1 FOR UPDATE',
    values: [webhookId],
  });
  if (!hooks[0]) return out; // deleted meanwhile (its rows went with it)
  const ordered = [...results].sort((x, y) => x.outcome.durationMs - y.outcome.durationMs);
  for (let i = 0; i < ordered.length; ) {
    let j = i;
    while (j < ordered.length && isSuccess(ordered[j]!.outcome)) j++;
    if (j > i) {
      out.next.push(...(await settleSuccesses(c, webhookId, ordered.slice(i, j))));
      i = j;
      continue;
    }
    const { attempt, outcome } = ordered[i++]!;
    const s = await settleFailure(c, attempt, outcome, settings);
    out.next.push(...s.next);
    if (s.retryAt) out.retries.push({ deliveryId: attempt.deliveryId, at: s.retryAt });
    out.paused ||= s.paused;
  }
  return out;
}

/** Successes: their attempts, their deliveries and the webhook's counters in one statement; then each chain's next. */
async function settleSuccesses(c: Client, webhookId: number, run: ReadonlyArray<{ attempt: Attempt; outcome: PostOutcome }>): Promise<number[]> {
  await c.query({
    name: 'webhook_settle_ok',
    text: `WITH a AS (
             UPDATE webhook_attempts t SET finished = true, succeeded = true, duration_ms = x.ms, status_code = x.code, error = NULL, response = x.response
               FROM unnest($2::bigint[], $3::int[], $4::int[], $5::text[]) AS x(id, ms, code, response) WHERE t.id = x.id
           ), d AS (
             UPDATE webhook_deliveries SET status = 'succeeded', finished_at = now(), leased_until = NULL WHERE id = ANY($6::bigint[])
           )
           UPDATE webhooks SET last_success_at = now(), last_status_code = $7, consecutive_failures = 0, failing_since = NULL WHERE id = $1`,
    values: [
      webhookId,
      run.map((r) => r.attempt.attemptId),
      run.map((r) => r.outcome.durationMs),
      run.map((r) => r.outcome.statusCode),
      run.map((r) => r.outcome.response),
      run.map((r) => r.attempt.deliveryId),
      run[run.length - 1]!.outcome.statusCode,
    ],
  });
  // A later statement than the lock's, so it sees what a fan-out committed meanwhile (chain.ts).
  return nextInChains(c, webhookId, run.map((r) => r.attempt.mailId));
}

async function settleFailure(
  c: Client,
  a: Attempt,
  outcome: PostOutcome,
  settings: WebhookSettings,
): Promise<{ next: number[]; retryAt?: Date; paused: boolean }> {
  await c.query({
    name: 'webhook_settle_attempt',
    text: `UPDATE webhook_attempts SET finished = true, succeeded = false, duration_ms = $2, status_code = $3, error = $4, response = $5 WHERE id = $1`,
    values: [a.attemptId, outcome.durationMs, outcome.statusCode, outcome.error, outcome.response],
  });
  const { rows: after } = await c.query({
    name: 'webhook_settle_failed',
    text: `UPDATE webhooks SET last_failure_at = now(), last_status_code = $2, consecutive_failures = consecutive_failures + 1,
                  failing_since = coalesce(failing_since, now())
            WHERE id = $1
        RETURNING is_active, consecutive_failures, failing_since < now() - make_interval(secs => $3) AS streak_too_long`,
    values: [a.webhookId, outcome.statusCode, settings.pauseAfterSeconds],
  });
  const h = after[0]!;
  const pause =
    h.is_active &&
    (outcome.statusCode === 410 || h.streak_too_long || (settings.pauseAfterFailures > 0 && h.consecutive_failures >= settings.pauseAfterFailures));
  // The schedule bounds the attempts; a 429/503's Retry-After (at most a day) replaces its delay.
  const scheduled = settings.retrySchedule[a.attempt];
  const retryIn = scheduled === undefined ? undefined : Math.min(outcome.retryAfterSeconds ?? scheduled, 86_400);
  if (pause || retryIn === undefined) {
    await c.query("UPDATE webhook_deliveries SET status = 'failed', finished_at = now(), leased_until = NULL WHERE id = $1", [a.deliveryId]);
    if (pause) {
      await c.query('UPDATE webhooks SET is_active = false, auto_paused_at = now() WHERE id = $1', [a.webhookId]);
      await cancelPending(c, a.webhookId);
      return { next: [], paused: true };
    }
    return { next: await nextInChains(c, a.webhookId, [a.mailId]), paused: false };
  }
  const { rows: r } = await c.query<{ at: Date }>(
    'UPDATE webhook_deliveries SET next_attempt_at = now() + make_interval(secs => $2), leased_until = NULL WHERE id = $1 RETURNING next_attempt_at AS at',
    [a.deliveryId, retryIn],
  );
  return { next: [], retryAt: r[0]!.at, paused: false };
}
