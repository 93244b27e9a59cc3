import type { Client } from '../../sql/pool.js';
import { append } from '../outbox/append.js';
import type { Tenant } from '../tenancy/context.js';

export interface ComplaintInput {
  mailId: string;
  feedbackType: string;
  /** The reporting system (the report's User-Agent). */
  reportedBy?: string | null;
  arrivalDate?: Date | null;
}

/**
 * Records a complaint about one of the tenant's mails, in the caller's tenant transaction: the
 * mail_complaints row and, only when that row is new, its 'complaint' event in the event outbox,
 * so a provider resending the same report counts once everywhere. The recipient is the mail's
 * own address (reports often redact theirs), read from the mail. No restriction: the spec's state table says a
 * complaint alone does not restrict. Undefined when the mail is not the tenant's (or no longer
 * exists) or was already complained about.
 */
export async function recordComplaint(tenant: Tenant, client: Client, input: ComplaintInput): Promise<{ id: number } | undefined> {
  const { rows } = await client.query<{ id: number; complained_at: string }>(
    `INSERT INTO mail_complaints (instance_id, mail_id, feedback_type, reported_by, arrival_date)
     SELECT instance_id, mail_id, $3, $4, $5 FROM mails WHERE instance_id = $1 AND mail_id = $2
     ON CONFLICT (mail_id) DO NOTHING
     RETURNING id, complained_at::text`,
    [tenant.instanceId, input.mailId, input.feedbackType.slice(0, 100), input.reportedBy?.slice(0, 500) ?? null, input.arrivalDate ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
  await append(tenant, client, { kind: 'complaint', mailId: input.mailId, occurredAt: row.complained_at });
  return { id: row.id };
}
