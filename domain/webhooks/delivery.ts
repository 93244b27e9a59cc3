import type { Client } from '../../sql/pool.js';
import { nextInChain } from './chain.js';
import type { PostOutcome } from './post.js';
import type { WebhookSettings } from './settings.js';
import { messageId, signingSecrets } from './signing.js';
import { cancelPending } from './webhooks.js';

/**
 * One attempt of one delivery, in two short transactions around the HTTP call (no lock or
 * connection is held while the receiver answers). Service role: the worker serves every instance.
 *
 * begin: under the webhook's row lock (which serializes it with every other begin and settle of
 * that webhook, not with the fan-out): skip unless the delivery is pending, due, not in flight and the head of its
 * chain; stop it if the webhook is paused; wait if the webhook has `concurrency` attempts in
 * flight; else lease it (leased_until: timeout + margin), count the attempt and write its row.
 * settle: record the outcome on the attempt, the delivery and the webhook, pause the webhook if
 * the rules say so, and enqueue what follows (the retry, or the next delivery of the chain).
 *
 * A worker killed between the two leaves the lease to lapse and the attempt unfinished; pg-boss
 * retries the job after its expiry, and the next begin closes that attempt as interrupted.
 */
export type Begin =
  | { kind: 'skip' }
  | { kind: 'later'; at: Date }
  | { kind: 'settled'; next: number[] }
  | {
      kind: 'attempt';
      attemptId: number;
      attempt: number;
      deliveryId: number;
      webhookId: number;
      mailId: string | null;
      url: string;
      secrets: string[];
      msgId: string;
      body: string;
    };

const LEASE_MARGIN_SECONDS = 5;

export async function beginAttempt(c: Client, deliveryId: number, settings: WebhookSettings, now: Date): Promise<Begin> {
  // Three statements and no more: this runs once per attempt, on the hot path.
  // NO KEY UPDATE: begins of one webhook queue here (its in-flight count), while the fan-out
  // (KEY SHARE) goes on; a begin only looks at older deliveries, which the fan-out never adds.
  const { rows: hooks } = await c.query({
    name: 'webhook_begin_lock',
    text: `SELECT id, url, is_active, secret, previous_secret, previous_secret_expires_at FROM webhooks
            WHERE id = (SELECT webhook_id FROM webhook_deliveries WHERE id = $1) FOR NO KEY UPDATE`,
    values: [deliveryId],
  });
  const w = hooks[0];
  if (!w) return { kind: 'skip' };
  const { rows } = await c.query({
    name: 'webhook_begin_delivery',
    text: `SELECT d.id, d.mail_id, d.status, d.attempts, d.event_id, e.type, e.body,
                  CASE WHEN d.leased_until > now() THEN d.leased_until END AS leased_until,
                  CASE WHEN d.next_attempt_at > now() THEN d.next_attempt_at END AS not_before,
                  EXISTS (SELECT 1 FROM webhook_deliveries p WHERE d.mail_id IS NOT NULL AND p.webhook_id = d.webhook_id
                             AND p.mail_id = d.mail_id AND p.status = 'pending' AND p.id < d.id) AS waits,
                  (SELECT count(*)::int FROM webhook_deliveries b WHERE b.webhook_id = d.webhook_id AND b.leased_until > now()) AS busy
             FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
            WHERE d.id = $1`,
    values: [deliveryId],
  });
  const d = rows[0];
  if (!d || d.status !== 'pending' || d.waits) return { kind: 'skip' };
  if (d.leased_until) return { kind: 'later', at: d.leased_until };
  if (d.not_before) return { kind: 'later', at: d.not_before };
  if (!w.is_active && d.type !== 'webhook.test') {
    await c.query("UPDATE webhook_deliveries SET status = 'cancelled', finished_at = now() WHERE id = $1", [deliveryId]);
    const next = await nextInChain(c, Number(w.id), d.mail_id);
    return { kind: 'settled', next: next === undefined ? [] : [next] };
  }
  if (d.busy >= settings.concurrency) return { kind: 'later', at: new Date(Date.now() + 250) };
  const attempt = Number(d.attempts) + 1;
  // An attempt left unfinished by a killed worker is closed as interrupted; this one is leased
  // (timeout + margin) and written.
  const { rows: a } = await c.query<{ id: string }>({
    name: 'webhook_begin_attempt',
    text: `WITH interrupted AS (
             UPDATE webhook_attempts SET finished = true, error = 'interrupted: the worker stopped during the attempt'
              WHERE delivery_id = $1 AND NOT finished
           ), leased AS (
             UPDATE webhook_deliveries SET attempts = $2, leased_until = now() + make_interval(secs => $3) WHERE id = $1
             RETURNING instance_id, webhook_id, id, event_id
           )
           INSERT INTO webhook_attempts (instance_id, webhook_id, delivery_id, event_id, attempt)
           SELECT instance_id, webhook_id, id, event_id, $2 FROM leased RETURNING id`,
    values: [deliveryId, attempt, settings.timeoutSeconds + LEASE_MARGIN_SECONDS],
  });
  return {
    kind: 'attempt',
    attemptId: Number(a[0]!.id),
    attempt,
    deliveryId,
    webhookId: Number(w.id),
    mailId: d.mail_id,
    url: w.url,
    secrets: signingSecrets(w, now),
    msgId: messageId(d.event_id),
    body: d.body,
  };
}

export interface Settled {
  /** Deliveries to enqueue now (the chain's next). */
  next: number[];
  /** This delivery's retry, when one is due later. */
  retryAt?: Date;
  paused: boolean;
}

const isSuccess = (o: PostOutcome) => o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300;

export async function settleAttempt(
  c: Client,
  a: Extract<Begin, { kind: 'attempt' }>,
  outcome: PostOutcome,
  settings: WebhookSettings,
): Promise<Settled> {
  const { rows: hooks } = await c.query({
    name: 'webhook_settle_lock',
    text: 'SELECT id, is_active FROM webhooks WHERE id = $1 FOR UPDATE',
    values: [a.webhookId],
  });
  if (!hooks[0]) return { next: [], paused: false }; // deleted meanwhile (its rows went with it)
  const ok = isSuccess(outcome);
  await c.query({
    name: 'webhook_settle_attempt',
    text: `UPDATE webhook_attempts SET finished = true, succeeded = $2, duration_ms = $3, status_code = $4, error = $5, response = $6 WHERE id = $1`,
    values: [a.attemptId, ok, outcome.durationMs, outcome.statusCode, outcome.error, outcome.response],
  });
  if (ok) {
    // One statement: the webhook's counters, the delivery, and its chain's next (the lock above
    // was taken by an earlier statement, so this one sees what a fan-out committed meanwhile).
    const { rows } = await c.query<{ next: number | null }>({
      name: 'webhook_settle_ok',
      text: `WITH h AS (
               UPDATE webhooks SET last_success_at = now(), last_status_code = $2, consecutive_failures = 0, failing_since = NULL WHERE id = $1
             ), d AS (
               UPDATE webhook_deliveries SET status = 'succeeded', finished_at = now(), leased_until = NULL WHERE id = $3
             )
             SELECT (SELECT id FROM webhook_deliveries
                      WHERE $4::text IS NOT NULL AND webhook_id = $1 AND mail_id = $4 AND status = 'pending' AND id <> $3
                      ORDER BY id LIMIT 1) AS next`,
      values: [a.webhookId, outcome.statusCode, a.deliveryId, a.mailId],
    });
    const next = rows[0]?.next;
    return { next: next == null ? [] : [Number(next)], paused: false };
  }
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
    const next = await nextInChain(c, a.webhookId, a.mailId);
    return { next: next === undefined ? [] : [next], paused: false };
  }
  const { rows: r } = await c.query<{ at: Date }>(
    'UPDATE webhook_deliveries SET next_attempt_at = now() + make_interval(secs => $2), leased_until = NULL WHERE id = $1 RETURNING next_attempt_at AS at',
    [a.deliveryId, retryIn],
  );
  return { next: [], retryAt: r[0]!.at, paused: false };
}
