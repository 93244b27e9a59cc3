import { NotFoundError, RuleViolation, ValidationFailed } from '../errors.js';
import type { Client, Pool } from '../../sql/pool.js';
import { countWith, toCountedPage, window, type Page, type PageRequest } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { append } from '../outbox/append.js';
import { refusedReceiver, type ReceiverPolicy } from './receiver-address.js';
import { newSecret } from './signing.js';
import type { WebhookEventType } from './event-types.js';

/** The Webhook resource of the spec, field for field (never the secret). */
export interface WebhookRow {
  id: number;
  name: string;
  url: string;
  events: WebhookEventType[] | null;
  is_active: boolean;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_status_code: number | null;
  consecutive_failures: number;
  failing_since: Date | null;
  auto_paused_at: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

// previous_secret_expires_at: "null if none in force", so a lapsed overlap reads null.
export const WEBHOOK_COLUMNS = `id, name, url, events, is_active, last_success_at, last_failure_at, last_status_code,
  consecutive_failures, failing_since, auto_paused_at,
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at,
  created_at, updated_at`;

// Derived from their schemas (domain/webhooks/input.ts); re-exported for the callers that named them here.
import type { WebhookInput, WebhookPatch } from './input.js';
export type { WebhookInput, WebhookPatch } from './input.js';

/**
 * A receiver URL: http(s), no credentials in it, never one of the service's own listeners, and a
 * public host unless private ones are allowed (receiver-address.ts).
 */
async function checkUrl(raw: string, receivers: ReceiverPolicy): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationFailed([{ pointer: '/url', code: 'url_parsing', message: 'Input should be a valid URL' }]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ValidationFailed([{ pointer: '/url', code: 'url_scheme', message: 'URL scheme should be http or https' }]);
  }
  if (url.username || url.password) {
    throw new ValidationFailed([{ pointer: '/url', code: 'url_credentials', message: 'URL should not carry credentials' }]);
  }
  const refused = await refusedReceiver(url, receivers);
  if (refused) throw new ValidationFailed([{ pointer: '/url', code: 'url_not_public', message: `Receiver refused: ${refused}` }]);
  return url.toString();
}

/** Duplicates removed, order kept; null stays null (all events). */
const eventList = (events: WebhookEventType[] | null | undefined): WebhookEventType[] | null =>
  events == null ? null : [...new Set(events)];

export async function listWebhooks(tenant: Tenant, pool: Pool, page: PageRequest): Promise<Page<WebhookRow>> {
  const { limit, offset } = window(page);
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<WebhookRow & { total_count: number }>(
      `SELECT ${WEBHOOK_COLUMNS}, count(*) OVER ()::int AS total_count FROM webhooks WHERE instance_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
      [tenant.instanceId, limit, offset],
    );
    return toCountedPage(rows, page, countWith(c, 'SELECT count(*)::int AS n FROM webhooks WHERE instance_id = $1', [tenant.instanceId]));
  });
}

export async function readWebhook(tenant: Tenant, c: Client, id: number, lock = false): Promise<WebhookRow> {
  const { rows } = await c.query<WebhookRow>(
    `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE instance_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenant.instanceId, id],
  );
  if (!rows[0]) throw new NotFoundError('webhook', id);
  return rows[0];
}

export async function getWebhook(tenant: Tenant, pool: Pool, id: number): Promise<WebhookRow> {
  return withTenant(pool, tenant, (c) => readWebhook(tenant, c, id));
}

/** The advisory lock class of an instance's webhook count (two-key form: never meets the one-key stage and migration locks). */
const WEBHOOK_COUNT_LOCK = 0x77686370; // 'whcp'

/**
 * POST: at most WEBHOOK_MAX_PER_INSTANCE webhooks per instance (`max`), since each one multiplies
 * every event of the instance into one more delivery. Paused webhooks count (a PATCH resumes them
 * without a create); deleted ones are gone. The count and the insert run under a transaction-level
 * advisory lock on the instance, so two creates at max - 1, on any web dynos, cannot both pass:
 * the second counts after the first commits.
 */
export async function createWebhook(
  tenant: Tenant,
  pool: Pool,
  input: WebhookInput,
  receivers: ReceiverPolicy,
  max: number,
): Promise<WebhookRow & { secret: string }> {
  const url = await checkUrl(input.url, receivers);
  const secret = newSecret();
  return withTenant(pool, tenant, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483647)::int)', [WEBHOOK_COUNT_LOCK, tenant.instanceId]);
    const { rows: count } = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE instance_id = $1', [tenant.instanceId]);
    if (count[0]!.n >= max) {
      throw new RuleViolation(
        'webhook_limit_reached',
        `this instance has ${count[0]!.n} webhooks and at most ${max} are allowed (paused ones count); delete one, or ask the operator to raise WEBHOOK_MAX_PER_INSTANCE`,
      );
    }
    const { rows } = await c.query<WebhookRow>(
      `INSERT INTO webhooks (instance_id, name, url, events, secret) VALUES ($1, $2, $3, $4, $5) RETURNING ${WEBHOOK_COLUMNS}`,
      [tenant.instanceId, input.name, url, eventList(input.events), secret],
    );
    return { ...rows[0]!, secret };
  });
}

/**
 * PATCH: only the fields given change, and updated_at. is_active true resumes a paused webhook
 * (clears auto_paused_at, and the failing streak, so one more failure does not pause it again
 * at once); false pauses it by hand and cancels its pending deliveries, as an automatic pause
 * does (a replay brings back what it missed).
 */
export async function updateWebhook(tenant: Tenant, pool: Pool, id: number, patch: WebhookPatch, receivers: ReceiverPolicy): Promise<WebhookRow> {
  const url = patch.url === undefined ? undefined : await checkUrl(patch.url, receivers);
  return withTenant(pool, tenant, async (c) => {
    const before = await readWebhook(tenant, c, id, true);
    const resume = patch.is_active === true && !before.is_active;
    const { rows } = await c.query<WebhookRow>(
      `UPDATE webhooks SET
          name = coalesce($3, name),
          url = coalesce($4, url),
          events = CASE WHEN $5::boolean THEN $6::text[] ELSE events END,
          is_active = coalesce($7, is_active),
          auto_paused_at = CASE WHEN $8::boolean THEN NULL ELSE auto_paused_at END,
          consecutive_failures = CASE WHEN $8::boolean THEN 0 ELSE consecutive_failures END,
          failing_since = CASE WHEN $8::boolean THEN NULL ELSE failing_since END,
          updated_at = now()
        WHERE instance_id = $1 AND id = $2
        RETURNING ${WEBHOOK_COLUMNS}`,
      [tenant.instanceId, id, patch.name ?? null, url ?? null, patch.events !== undefined, eventList(patch.events), patch.is_active ?? null, resume],
    );
    if (patch.is_active === false && before.is_active) await cancelPending(c, id);
    return rows[0]!;
  });
}

/** A paused webhook's pending deliveries stop (marked cancelled); its in-flight attempts end on their own. */
export async function cancelPending(c: Client, webhookId: number): Promise<void> {
  await c.query(
    `UPDATE webhook_deliveries d SET status = 'cancelled', finished_at = now()
       FROM webhook_events e
      WHERE d.webhook_id = $1 AND d.status = 'pending' AND e.id = d.event_id AND e.type <> 'webhook.test'`,
    [webhookId],
  );
}

/**
 * DELETE: the webhook, its deliveries and its attempts (cascade). As the service role, like every
 * delete (the tenant role deletes nothing: sql/migrations/009), the instance in the WHERE clause.
 */
export async function deleteWebhook(tenant: Tenant, pool: Pool, id: number): Promise<void> {
  const { rowCount } = await pool.query('DELETE FROM webhooks WHERE instance_id = $1 AND id = $2', [tenant.instanceId, id]);
  if (!rowCount) throw new NotFoundError('webhook', id);
}

/** The overlap during which the previous secret keeps signing after a rotation (spec: Limits). */
export const SECRET_OVERLAP_HOURS = 24;

/**
 * POST rotate-secret: a new secret signs from now. Without expire_previous the one it replaces
 * keeps signing beside it for 24 hours; rotating again inside them drops the oldest (only one
 * previous secret is kept: the one just replaced). With expire_previous only the new one signs.
 */
export async function rotateSecret(
  tenant: Tenant,
  pool: Pool,
  id: number,
  expirePrevious: boolean,
): Promise<WebhookRow & { secret: string }> {
  const secret = newSecret();
  return withTenant(pool, tenant, async (c) => {
    await readWebhook(tenant, c, id, true);
    const { rows } = await c.query<WebhookRow>(
      `UPDATE webhooks SET
          previous_secret = CASE WHEN $4::boolean THEN NULL ELSE secret END,
          previous_secret_expires_at = CASE WHEN $4::boolean THEN NULL ELSE now() + make_interval(hours => $5) END,
          secret = $3,
          updated_at = now()
        WHERE instance_id = $1 AND id = $2
        RETURNING ${WEBHOOK_COLUMNS}`,
      [tenant.instanceId, id, secret, expirePrevious, SECRET_OVERLAP_HOURS],
    );
    return { ...rows[0]!, secret };
  });
}

/**
 * POST test: a webhook.test event for this webhook, through the outbox like every event (so it
 * is signed, retried and logged like them), whatever the webhook's filter.
 */
export async function sendTestEvent(tenant: Tenant, pool: Pool, id: number): Promise<{ event_id: number; webhook_id: number; type: 'webhook.test' }> {
  return withTenant(pool, tenant, async (c) => {
    await readWebhook(tenant, c, id);
    const [eventId] = await append(tenant, c, { kind: 'webhook.test', entityId: id });
    return { event_id: Number(eventId!), webhook_id: id, type: 'webhook.test' as const };
  });
}

/** A paused webhook receives nothing, a replay included: resume it first. */
export function assertActive(w: WebhookRow): void {
  if (!w.is_active) throw new RuleViolation('webhook_inactive', `webhook ${w.id} is paused; resume it with PATCH /v1/webhooks/${w.id} {"is_active": true}`);
}
