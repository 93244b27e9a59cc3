import type { Pool } from '../../sql/pool.js';
import { eventLogPage, type EventLogFilter, type EventLogRow } from '../mail/event-log.js';
import type { Page } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';

/** One unsubscribe event: the row of mail_unsubscribes with what identifies its mail. */
export interface Unsubscribe extends EventLogRow {
  method: 'one_click' | 'page';
  reason: string | null;
  comment: string | null;
  unsubscribed_at: Date;
  updated_at: Date;
}

/** The activity listings' filters that apply to an event log (dates on unsubscribed_at). */
export type UnsubscribeFilter = EventLogFilter;

/** GET /v1/mail-unsubscribes: an event log bounded by the retention of its mail (spec). */
export function listUnsubscribes(tenant: Tenant, pool: Pool, f: UnsubscribeFilter): Promise<Page<Unsubscribe>> {
  return eventLogPage<Unsubscribe>(tenant, pool, f, {
    name: 'unsubscribes-page',
    selectFrom: `SELECT u.id, u.mail_id, m.msg_id, m.to_email AS recipient, m.sender, m.subject, u.method, u.reason, u.comment,
                        u.unsubscribed_at, u.updated_at, m.custom_msg_id, m.custom_group_code
                   FROM mail_unsubscribes u`,
    alias: 'u',
    timeColumn: 'unsubscribed_at',
  });
}
