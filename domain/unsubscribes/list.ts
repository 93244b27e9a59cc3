import type { Pool } from '../../sql/pool.js';
import { eventLogClause, eventLogValues, type EventLogFilter } from '../mail/event-log-filter.js';
import type { Page } from '../pagination.js';
import { toPage } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';

/** One unsubscribe event: the row of mail_unsubscribes with what identifies its mail. */
export interface Unsubscribe {
  id: number;
  mail_id: string;
  msg_id: string;
  recipient: string;
  sender: string | null;
  subject: string;
  method: 'one_click' | 'page';
  reason: string | null;
  comment: string | null;
  unsubscribed_at: Date;
  updated_at: Date;
  custom_msg_id: string | null;
  custom_group_code: string | null;
}

/** The activity listings' filters that apply to an event log (dates on unsubscribed_at). */
export type UnsubscribeFilter = EventLogFilter;

/**
 * GET /v1/mail-unsubscribes: newest first. An event log bounded by the retention of its mail
 * (spec): the rows go with their mail at the purge, and a mail already outside the online window
 * but not yet purged is left out too, so the listing never depends on when the purge last ran.
 * total_items is null, as in the activity listings.
 */
export async function listUnsubscribes(tenant: Tenant, pool: Pool, f: UnsubscribeFilter): Promise<Page<Unsubscribe>> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Unsubscribe>({
      name: 'unsubscribes-page',
      text: `SELECT u.id, u.mail_id, m.msg_id, m.to_email AS recipient, m.sender, m.subject, u.method, u.reason, u.comment,
                    u.unsubscribed_at, u.updated_at, m.custom_msg_id, m.custom_group_code
               FROM mail_unsubscribes u
               JOIN mails m ON m.instance_id = u.instance_id AND m.mail_id = u.mail_id
              ${eventLogClause('u', 'unsubscribed_at')}`,
      values: eventLogValues(tenant, f),
    }),
  );
  return toPage(rows, f, null);
}
