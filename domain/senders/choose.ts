import type { Pool } from '../../sql/pool.js';
import { withTenant, type Tenant } from '../tenancy/context.js';

interface SenderRow {
  id: number;
  email_address: string;
  is_verified: boolean;
  is_consent_required: boolean;
  is_sandbox: boolean;
}

/**
 * The sender of a mail sent to a person who has not consented yet (the consent confirmation mail,
 * domain/consent/confirmation-mail.ts, and the form mails, domain/forms/mails.ts), or why there
 * is none. Without `senderId`: the instance's first sender (lowest id) whose domain is verified and
 * that does not require consent and is not the sandbox's (which sends only to members). `senderId` (a form's auto_reply_sender_id) is used as named,
 * never replaced by another: a named sender that is missing, unverified or requires consent is
 * reported, not silently swapped.
 */
export async function chooseSender(tenant: Tenant, pool: Pool, senderId: number | null): Promise<SenderRow | { reason: string }> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<SenderRow>(
      `SELECT s.id, s.email_address, d.is_verified, s.is_consent_required, d.is_sandbox
         FROM senders s JOIN domains d ON d.instance_id = s.instance_id AND d.id = s.domain_id
        WHERE s.instance_id = $1
          AND CASE WHEN $2::bigint IS NULL THEN d.is_verified AND NOT s.is_consent_required AND NOT d.is_sandbox ELSE s.id = $2 END
        ORDER BY s.id LIMIT 1`,
      [tenant.instanceId, senderId],
    ),
  );
  const sender = rows[0];
  if (!sender) {
    return { reason: senderId === null ? 'the instance has no sender with a verified domain that does not require consent' : `sender ${senderId} does not exist` };
  }
  if (!sender.is_verified) return { reason: `the domain of sender ${sender.email_address} is not verified` };
  if (sender.is_sandbox) return { reason: `sender ${sender.email_address} is the sandbox's: it sends only to the instance's members, not to people who have not consented yet` };
  if (sender.is_consent_required) return { reason: `sender ${sender.email_address} requires consent, which the person has not given yet` };
  return sender;
}
