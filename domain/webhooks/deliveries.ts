import { NotFoundError } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import type { JobQueue } from '../job-queue.js';
import { toPage, window, type Page, type PageRequest } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { chainHeads } from './chain.js';
import { deliveryJobExpiry, WEBHOOK_DELIVER_QUEUE } from './deliver-job.js';
import { backlogJobs, virtualTime } from './fair-share.js';
import { messageId } from './signing.js';
import { assertActive, readWebhook } from './webhooks.js';

/** One attempt as GET /v1/webhooks/{id}/deliveries lists it (docs/webhooks.md). */
export interface AttemptRow {
  id: number;
  delivery_id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  attempted_at: Date;
  /** succeeded (2xx), failed (any other answer or none), pending (in flight). */
  status: 'succeeded' | 'failed' | 'pending';
  duration_ms: number | null;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  delivery_status: string;
}

export interface AttemptFilter extends PageRequest {
  status?: 'succeeded' | 'failed' | 'pending';
}

/** GET deliveries: every attempt, newest first. */
export async function listAttempts(tenant: Tenant, pool: Pool, webhookId: number, f: AttemptFilter): Promise<Page<AttemptRow>> {
  const { limit, offset } = window(f);
  return withTenant(pool, tenant, async (c) => {
    await readWebhook(tenant, c, webhookId);
    const { rows } = await c.query<Omit<AttemptRow, 'event_id'> & { event_id: string }>(
      `SELECT a.id, a.delivery_id, a.event_id, e.type AS event_type, a.attempt, a.attempted_at, s.status,
              a.duration_ms, a.status_code, a.error, a.response AS response_body, d.status AS delivery_status
         FROM webhook_attempts a
         CROSS JOIN LATERAL (SELECT CASE WHEN NOT a.finished THEN 'pending' WHEN a.succeeded THEN 'succeeded' ELSE 'failed' END AS status) s
         JOIN webhook_deliveries d ON d.id = a.delivery_id
         JOIN webhook_events e ON e.id = a.event_id
        WHERE a.instance_id = $1 AND a.webhook_id = $2 AND ($3::text IS NULL OR s.status = $3)
        ORDER BY a.id DESC LIMIT $4 OFFSET $5`,
      [tenant.instanceId, webhookId, f.status ?? null, limit, offset],
    );
    return toPage(
      rows.map((r) => ({ ...r, id: Number(r.id), delivery_id: Number(r.delivery_id), event_id: messageId(r.event_id) })),
      f,
      null,
    );
  });
}

/**
 * POST deliveries/{delivery_id}/retry: the delivery's event again, now, as a new delivery of
 * the same event (same webhook-id). It stands outside its mail's chain: asked for by hand, it
 * does not wait for older pending events of the mail.
 */
export async function retryDelivery(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  webhookId: number,
  deliveryId: number,
  timeoutSeconds: number,
): Promise<{ delivery_id: number; event_id: string }> {
  return withTenant(pool, tenant, async (c) => {
    assertActive(await readWebhook(tenant, c, webhookId));
    const { rows } = await c.query<{ id: string; event_id: string }>(
      `INSERT INTO webhook_deliveries (instance_id, webhook_id, event_id)
       SELECT instance_id, webhook_id, event_id FROM webhook_deliveries WHERE instance_id = $1 AND webhook_id = $2 AND id = $3
       RETURNING id, event_id`,
      [tenant.instanceId, webhookId, deliveryId],
    );
    if (!rows[0]) throw new NotFoundError('webhook_delivery', deliveryId);
    const id = Number(rows[0].id);
    await queue.insert(c, [{ name: WEBHOOK_DELIVER_QUEUE, data: { delivery_id: id }, expireInSeconds: deliveryJobExpiry(timeoutSeconds) }]);
    return { delivery_id: id, event_id: messageId(rows[0].event_id) };
  });
}

/**
 * POST replay {since, until?}: every event of [since, until) this webhook subscribes to (test
 * events aside) again, in their order, as new deliveries (each keeps its webhook-id, so a
 * receiver that already has one can tell). Events are kept WEBHOOK_RETENTION_DAYS.
 */
export async function replay(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  webhookId: number,
  since: Date,
  until: Date | undefined,
  timeoutSeconds: number,
): Promise<{ queued: number }> {
  // The queue's virtual time is read with the service role: the tenant sees only its own rows.
  const now = await virtualTime(pool);
  return withTenant(pool, tenant, async (c) => {
    const w = await readWebhook(tenant, c, webhookId, true);
    assertActive(w);
    const { rows } = await c.query<{ id: string }>(
      // Tagged from the queue's virtual time on (fair-share.ts): a large replay is a backlog
      // like any other, spread behind other instances' new work rather than all at its front.
      `INSERT INTO webhook_deliveries (instance_id, webhook_id, event_id, mail_id, fair_tag)
       SELECT e.instance_id, $2, e.id, e.mail_id, $6::bigint + row_number() OVER (ORDER BY e.id) - 1 FROM webhook_events e
        WHERE e.instance_id = $1 AND e.occurred_at >= $3 AND ($4::timestamptz IS NULL OR e.occurred_at < $4)
          AND e.type <> 'webhook.test' AND ($5::text[] IS NULL OR e.type = ANY($5))
        ORDER BY e.id
       RETURNING id`,
      [tenant.instanceId, webhookId, since, until ?? null, w.events, now],
    );
    const heads = await chainHeads(c, rows.map((r) => Number(r.id)));
    await queue.insert(c, (await backlogJobs(c, heads, now)).map((j) => ({
      name: WEBHOOK_DELIVER_QUEUE,
      data: { delivery_id: j.deliveryId },
      expireInSeconds: deliveryJobExpiry(timeoutSeconds),
      priority: j.priority,
    })));
    return { queued: rows.length };
  });
}
