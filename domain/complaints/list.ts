import type { Pool } from '../../sql/pool.js';
import { eventLogPage, type EventLogFilter, type EventLogRow } from '../mail/event-log.js';
import type { Page } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';

/** One feedback-loop complaint (ARF): the row of mail_complaints with what identifies its mail. */
export interface Complaint extends EventLogRow {
  feedback_type: string;
  reported_by: string | null;
  arrival_date: Date | null;
  complained_at: Date;
}

/** The activity listings' filters that apply to an event log (dates on complained_at). */
export type ComplaintFilter = EventLogFilter;

/** GET /v1/mail-complaints: bounded by the retention of the complained-of mail, as the unsubscribe log. */
export function listComplaints(tenant: Tenant, pool: Pool, f: ComplaintFilter): Promise<Page<Complaint>> {
  return eventLogPage<Complaint>(tenant, pool, f, {
    name: 'complaints-page',
    selectFrom: `SELECT k.id, k.mail_id, m.msg_id, m.to_email AS recipient, m.sender, m.subject, k.feedback_type, k.reported_by,
                        k.arrival_date, k.complained_at, m.custom_msg_id, m.custom_group_code
                   FROM mail_complaints k`,
    alias: 'k',
    timeColumn: 'complained_at',
  });
}
