import { reportKeys } from '../domain/bounces/report-keys.js';
import { reportTag } from '../domain/bounces/report-tag.js';
import { addDomain, setDomainChecks } from '../domain/domains/domains.js';
import { newId } from '../domain/mail/ids.js';
import { createSender } from '../domain/senders/senders.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { createInstance } from '../domain/tenancy/instances.js';
import type { Pool } from '../sql/pool.js';

/** What the benchmarks seed first, in the fresh database of the service they started. */

/** A new instance, as the tenant its domain calls take. */
export async function benchTenant(pool: Pool, slug: string, name: string): Promise<Tenant> {
  const instance = await createInstance(pool, { slug, name });
  return { instanceId: instance.id, slug, tz: instance.tz };
}

/**
 * A domain its senders may send from: added, with its four checks approved as `domain verify`
 * would set them (a benchmark publishes no DNS records; what it measures starts after).
 */
export async function verifiedDomain(tenant: Tenant, pool: Pool, domain: string, opts: Parameters<typeof addDomain>[3] = {}): Promise<Awaited<ReturnType<typeof addDomain>>> {
  const added = await addDomain(tenant, pool, domain, opts);
  await setDomainChecks(tenant, pool, domain, { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
  return added;
}

/**
 * `count` mails of one message from a sender of `domain` (a verified domain of the tenant), sent a
 * minute ago (status 3): what a bounce report comes back about. Returns each mail's tagged VERP
 * return path (domain/bounces/report-tag.ts), the address an inbound report is sent to.
 */
export async function sentMails(tenant: Tenant, pool: Pool, domain: string, count: number): Promise<string[]> {
  const sender = await createSender(tenant, pool, { email: `news@${domain}`, name: 'Bench' });
  const msgId = newId();
  const { rows } = await pool.query<{ id: number }>(
    `INSERT INTO messages (instance_id, msg_id, sender_id, from_email, from_name, subject, html, created_at)
     VALUES ($1, $2, $3, $4, $5, 'Hello', '<p>Hello</p>', now()) RETURNING id`,
    [tenant.instanceId, msgId, sender.id, sender.email_address, sender.name],
  );
  const mailIds = Array.from({ length: count }, () => newId());
  await pool.query(
    `INSERT INTO mails (instance_id, mail_id, message_id, msg_id, sender_id, sender, to_email, subject, status, attempts, received_at, queued_at, sent_at, delay)
     SELECT $1, r.mail_id, $2, $3, $4, $5, 'rcpt' || r.n || '@example.org', 'Hello', 3, 1, now() - interval '2 minutes', now() - interval '2 minutes', now() - interval '1 minute', 60
       FROM unnest($6::text[]) WITH ORDINALITY AS r(mail_id, n)`,
    [tenant.instanceId, rows[0]!.id, msgId, sender.id, sender.email_address, mailIds],
  );
  await pool.query('ANALYZE mails');
  const keys = await reportKeys(pool);
  return mailIds.map((id) => `bounce+${id}.${reportTag(keys.current, id)}@${domain}`);
}
