import { append } from '../outbox/append.js';
import { clientAddress } from '../tenancy/ip.js';
import type { Client, Pool } from '../../sql/pool.js';
import { mailOwner } from '../mail/owner.js';
import { lift, restrict, restrictionInForce } from '../restrictions/restrictions.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { MAX_USER_AGENT } from './record.js';

/** The mail an unsubscribe link names, with what its pages show. */
export interface UnsubscribeTarget {
  tenant: Tenant;
  mailId: string;
  recipient: string;
  sender: string | null;
  /** The address is under a restriction for reason unsubscribe (the page offers to resubscribe). */
  unsubscribed: boolean;
}

/**
 * The links carry only a mail id (signed: api/routes/tracking.ts checks the token first); the instance
 * is the mail's own (mailOwner). Undefined for a mail that no longer exists (purged by retention).
 */
export async function findUnsubscribeTarget(pool: Pool, mailId: string): Promise<UnsubscribeTarget | undefined> {
  const owner = await mailOwner(pool, mailId);
  if (!owner) return undefined;
  const { tenant, toEmail: recipient, sender } = owner;
  const inForce = await withTenant(pool, tenant, (c) => restrictionInForce(tenant, c, recipient));
  return { tenant, mailId, recipient, sender, unsubscribed: inForce?.reason === 'unsubscribe' };
}

export interface UnsubscribeInput {
  /** 'one_click': RFC 8058 POST from the mail client; 'page': the confirmation page's form. */
  method: 'one_click' | 'page';
  reason?: string | null;
  comment?: string | null;
  userAgent?: string | null;
  ip?: string | null;
}

const MAX_REASON = 200;
const MAX_COMMENT = 2_000;

/**
 * Spec (States and transitions): an unsubscribe writes an event row and puts the address under
 * a restriction with reason unsubscribe. The event row is one per mail: the first unsubscribe is
 * kept, and a later one only completes a missing reason or comment. The restriction is ensured
 * every time (someone who resubscribed and unsubscribes again is restricted again; a restriction
 * already in force for another reason is kept). An outbox event goes to analytics and webhooks
 * when something new happened. All in one tenant transaction.
 */
export async function unsubscribe(
  tenant: Tenant,
  pool: Pool,
  target: UnsubscribeTarget,
  input: UnsubscribeInput,
): Promise<{ firstTime: boolean; restricted: boolean }> {
  return withTenant(pool, tenant, async (c) => {
    const event = await c.query<{ inserted: boolean }>(
      `INSERT INTO mail_unsubscribes (instance_id, mail_id, method, reason, comment, user_agent, ip)
       VALUES ($1, $2, $3, $4, $5, $6, $7::inet)
       ON CONFLICT (mail_id) DO UPDATE
         SET reason = coalesce(mail_unsubscribes.reason, EXCLUDED.reason),
             comment = coalesce(mail_unsubscribes.comment, EXCLUDED.comment),
             updated_at = CASE WHEN (mail_unsubscribes.reason IS NULL AND EXCLUDED.reason IS NOT NULL)
                                 OR (mail_unsubscribes.comment IS NULL AND EXCLUDED.comment IS NOT NULL)
                               THEN now() ELSE mail_unsubscribes.updated_at END
       RETURNING (xmax = 0) AS inserted`,
      [
        tenant.instanceId,
        target.mailId,
        input.method,
        clip(input.reason, MAX_REASON),
        clip(input.comment, MAX_COMMENT),
        clip(input.userAgent, MAX_USER_AGENT),
        clientAddress(input.ip ?? undefined),
      ],
    );
    const firstTime = event.rows[0]!.inserted;
    const { created } = await restrict(tenant, c, target.recipient, 'unsubscribe');
    if (firstTime || created) await outbox(tenant, c, target.mailId, input);
    return { firstTime, restricted: created };
  });
}

/**
 * Spec: a recipient who resubscribes lifts the restriction (deleted_at set) and the original
 * unsubscribe event is not modified. Only an unsubscribe restriction is lifted this way: a link
 * in a mail never lifts a hard bounce.
 */
export async function resubscribe(tenant: Tenant, pool: Pool, target: UnsubscribeTarget): Promise<boolean> {
  return withTenant(pool, tenant, async (c) => (await lift(tenant, c, target.recipient, 'unsubscribe')) !== undefined);
}

async function outbox(tenant: Tenant, c: Client, mailId: string, input: UnsubscribeInput): Promise<void> {
  await append(tenant, c, { kind: 'unsubscribe', mailId, userAgent: clip(input.userAgent, MAX_USER_AGENT), ip: clientAddress(input.ip ?? undefined) });
}

function clip(value: string | null | undefined, max: number): string | null {
  if (value === undefined || value === null) return null;
  // Postgres text cannot hold NUL: a form field carrying one would otherwise be a 500.
  const v = value.replace(/\u0000/g, '').trim();
  return v === '' ? null : v.slice(0, max);
}

