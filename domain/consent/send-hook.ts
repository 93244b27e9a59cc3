import type { Client } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';

export interface ConsentVerdict {
  allowed: boolean;
  /** Logged as the drop reason when not allowed. */
  reason?: string;
}

/**
 * Whether a sender that requires consent (senders.is_consent_required) may mail a recipient.
 * Asked by the send worker at send time, inside its tenant transaction. Consent records arrive
 * with the consent issue, which fills this in; until then nobody has consented, so nothing is
 * allowed. Callers ask only for senders that require consent.
 */
export async function consentAllows(
  _tenant: Tenant,
  _client: Client,
  _query: { senderId: number; recipient: string },
): Promise<ConsentVerdict> {
  return { allowed: false, reason: 'no_consent' };
}
