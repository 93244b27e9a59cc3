import type { Pool } from '../../sql/pool.js';
import { retentionStart } from '../mail/ids.js';
import type { Page, PageRequest } from '../pagination.js';
import { toPage, window } from '../pagination.js';
import { likePrefix } from '../text.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { toUtcRange, type LocalDateFilter } from '../time/local-date-range.js';

/** One feedback-loop complaint (ARF): the row of mail_complaints with what identifies its mail. */
export interface Complaint {
  id: number;
  mail_id: string;
  msg_id: string;
  recipient: string;
  sender: string | null;
  subject: string;
  feedback_type: string;
  reported_by: string | null;
  arrival_date: Date | null;
  complained_at: Date;
  custom_msg_id: string | null;
  custom_group_code: string | null;
}

/** The activity listings' filters that apply to an event log (dates on complained_at). */
export interface ComplaintFilter extends PageRequest, LocalDateFilter {
  recipient?: string;
  recipient_operator?: 'eq' | 'starts_with';
  mail_id?: string;
  msg_id?: string;
}

/**
 * GET /v1/mail-complaints: newest first, bounded by the retention of the complained-of mail (as
 * the unsubscribe log: purged with it, and left out once the mail is outside the online window).
 * total_items is null, as in the activity listings.
 */
export async function listComplaints(tenant: Tenant, pool: Pool, f: ComplaintFilter): Promise<Page<Complaint>> {
  const range = toUtcRange(f, tenant.tz);
  const recipient = f.recipient == null ? null : f.recipient.toLowerCase();
  const { limit, offset } = window(f);
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Complaint>({
      name: 'complaints-page',
      text: `SELECT k.id, k.mail_id, m.msg_id, k.recipient, m.sender, m.subject, k.feedback_type, k.reported_by,
                    k.arrival_date, k.complained_at, m.custom_msg_id, m.custom_group_code
               FROM mail_complaints k
               JOIN mails m ON m.instance_id = k.instance_id AND m.mail_id = k.mail_id
              WHERE k.instance_id = $1
                AND m.received_at >= $2
                AND ($3::timestamptz IS NULL OR k.complained_at >= $3)
                AND ($4::timestamptz IS NULL OR k.complained_at < $4)
                AND ($5::text IS NULL OR (CASE WHEN $6 THEN lower(k.recipient) LIKE $7 ELSE lower(k.recipient) = $5 END))
                AND ($8::text IS NULL OR k.mail_id = $8)
                AND ($9::text IS NULL OR m.msg_id = $9)
              ORDER BY k.complained_at DESC, k.id DESC
              LIMIT $10 OFFSET $11`,
      values: [
        tenant.instanceId, retentionStart(), range.from, range.to,
        recipient, f.recipient_operator === 'starts_with', recipient === null ? null : likePrefix(recipient),
        f.mail_id ?? null, f.msg_id ?? null, limit, offset,
      ],
    }),
  );
  return toPage(rows, f, null);
}
