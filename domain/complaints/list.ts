import type { Pool } from '../../sql/pool.js';
import { eventLogClause, eventLogValues, type EventLogFilter } from '../mail/event-log-filter.js';
import type { Page } from '../pagination.js';
import { toPage } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';

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
export type ComplaintFilter = EventLogFilter;

/**
 * GET /v1/mail-complaints: newest first, bounded by the retention of the complained-of mail (as
 * the unsubscribe log: purged with it, and left out once the mail is outside the online window).
 * total_items is null, as in the activity listings.
 */
export async function listComplaints(tenant: Tenant, pool: Pool, f: ComplaintFilter): Promise<Page<Complaint>> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Complaint>({
      name: 'complaints-page',
      text: `SELECT k.id, k.mail_id, m.msg_id, m.to_email AS recipient, m.sender, m.subject, k.feedback_type, k.reported_by,
                    k.arrival_date, k.complained_at, m.custom_msg_id, m.custom_group_code
               FROM mail_complaints k
               JOIN mails m ON m.instance_id = k.instance_id AND m.mail_id = k.mail_id
              ${eventLogClause('k', 'complained_at')}`,
      values: eventLogValues(tenant, f),
    }),
  );
  return toPage(rows, f, null);
}
