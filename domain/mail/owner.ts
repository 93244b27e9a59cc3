import { query, type Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';

/** A mail found by its id alone, and the instance it belongs to. */
export interface MailOwner {
  tenant: Tenant;
  mailId: string;
  toEmail: string;
  sender: string | null;
  receivedAt: Date;
}

/**
 * Whose mail an id is. Bounce and complaint reports (domain/bounces/authentic.ts) and the public
 * unsubscribe links (domain/tracking/unsubscribe.ts) arrive with a mail id and no tenant, so
 * this one read runs as the service role (mails.mail_id is unique across instances); everything
 * after it runs in that tenant's transaction. An id alone proves nothing: callers act only on an
 * id they authenticated (a report's tag, a link's signed token). Undefined for a mail that does
 * not exist, or no longer does (purged by retention).
 */
export async function mailOwner(pool: Pool, mailId: string): Promise<MailOwner | undefined> {
  const { rows } = await query<{ instance_id: number; slug: string; tz: string | null; to_email: string; sender: string | null; received_at: Date }>(
    pool,
    `SELECT m.instance_id, i.slug, i.tz, m.to_email, m.sender, m.received_at
       FROM mails m JOIN instances i ON i.id = m.instance_id
      WHERE m.mail_id = $1`,
    [mailId],
    'cartero_mail_owner',
  );
  const r = rows[0];
  if (!r) return undefined;
  return { tenant: { instanceId: r.instance_id, slug: r.slug, tz: r.tz }, mailId, toEmail: r.to_email, sender: r.sender, receivedAt: r.received_at };
}
