import type { Client } from '../../sql/pool.js';
import { ValidationFailed } from '../errors.js';
import type { Tenant } from '../tenancy/context.js';
import { unknownPurposes } from './purposes.js';
import { resolveIn } from './resolve.js';

export interface ConsentVerdict {
  allowed: boolean;
  /** Logged as the drop reason when not allowed. */
  reason?: string;
}

/**
 * Whether a sender that requires consent (senders.is_consent_required) may mail each recipient:
 * the resolver must answer `allowed` for the recipient's address on channel mail for every
 * purpose the send declared (message_purposes, required at acceptance for such senders).
 * Asked by the send worker at every try (domain/mail/gates.ts), inside its tenant transaction,
 * so a revocation registered while a mail waits stops it, for a batch's mails at once: one read
 * of their purposes, and one resolver query per distinct set of purposes (a batch is usually one
 * message's mails: one). Callers ask only for senders that require consent.
 *
 * The drop reason names each purpose that failed with its verdict, e.g.
 * `no_consent:2=denied,3=no_consent`; a mail accepted before its sender required consent
 * declares no purposes and is dropped as `no_consent:no_purposes` (nothing to check it against).
 */
export async function consentVerdicts(
  tenant: Tenant,
  client: Client,
  mails: ReadonlyArray<{ mailId: string; recipient: string }>,
): Promise<Map<string, ConsentVerdict>> {
  const verdicts = new Map<string, ConsentVerdict>();
  if (!mails.length) return verdicts;
  const { rows } = await client.query<{ mail_id: string; purpose_ids: number[] | null }>(
    `SELECT m.mail_id, to_json(p.purpose_ids) AS purpose_ids
       FROM mails m JOIN message_purposes p ON p.instance_id = m.instance_id AND p.message_id = m.message_id
      WHERE m.instance_id = $1 AND m.mail_id = ANY ($2::text[])`,
    [tenant.instanceId, mails.map((m) => m.mailId)],
  );
  const purposesOf = new Map(rows.map((r) => [r.mail_id, r.purpose_ids ?? []]));
  // The mails by their purposes: one resolver query for each set, all its recipients at once.
  const bySet = new Map<string, { purposeIds: number[]; mails: Array<{ mailId: string; recipient: string }> }>();
  for (const mail of mails) {
    const purposeIds = purposesOf.get(mail.mailId) ?? [];
    if (!purposeIds.length) {
      verdicts.set(mail.mailId, { allowed: false, reason: 'no_consent:no_purposes' });
      continue;
    }
    const key = JSON.stringify(purposeIds);
    const group = bySet.get(key) ?? { purposeIds, mails: [] };
    bySet.set(key, group);
    group.mails.push(mail);
  }
  for (const { purposeIds, mails: group } of bySet.values()) {
    const items = await resolveIn(tenant, client, {
      channel: 'mail',
      contacts: group.map((m) => ({ contact: m.recipient, contact_type: 'email_address' })),
      purpose_ids: purposeIds,
    });
    // resolveIn answers each contact in order, each purpose in order.
    group.forEach((mail, i) => {
      const failed = items.slice(i * purposeIds.length, (i + 1) * purposeIds.length).filter((item) => item.verdict !== 'allowed');
      verdicts.set(mail.mailId, failed.length ? { allowed: false, reason: `no_consent:${failed.map((f) => `${f.purpose_id}=${f.verdict}`).join(',')}` } : { allowed: true });
    });
  }
  return verdicts;
}

/**
 * The purposes a send declares (POST /v1/mails/send purpose_ids), checked at acceptance in its
 * transaction: a sender that requires consent needs them (422 missing at /purpose_ids: without
 * them no recipient could ever be sent to), and each must be a purpose of the instance (422
 * value_error.unknown_purpose at /purpose_ids/<i>: a mistyped id would drop every recipient).
 * A sender that does not require consent may declare them too; they are kept and not checked.
 */
export async function checkSendPurposes(
  tenant: Tenant,
  client: Client,
  sender: { is_consent_required: boolean },
  purposeIds: readonly number[] | undefined,
): Promise<void> {
  if (purposeIds === undefined) {
    if (!sender.is_consent_required) return;
    throw new ValidationFailed([
      { pointer: '/purpose_ids', code: 'missing', message: 'This sender requires consent: declare the purposes of the send (purpose_ids)' },
    ]);
  }
  const unknown = new Set(await unknownPurposes(tenant, client, purposeIds));
  if (!unknown.size) return;
  throw new ValidationFailed(
    purposeIds.flatMap((id, i) =>
      unknown.has(id) ? [{ pointer: `/purpose_ids/${i}`, code: 'value_error.unknown_purpose', message: `${id} is not a consent purpose of this instance` }] : [],
    ),
  );
}

/** Keep the purposes a send declared with its message (acceptance's transaction); none declared, nothing written. */
export async function recordSendPurposes(tenant: Tenant, client: Client, messageId: number, purposeIds: readonly number[] | undefined): Promise<void> {
  if (!purposeIds?.length) return;
  await client.query('INSERT INTO message_purposes (message_id, instance_id, purpose_ids) VALUES ($1, $2, $3::bigint[])', [
    messageId,
    tenant.instanceId,
    [...purposeIds],
  ]);
}
