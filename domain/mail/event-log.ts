import type { QueryResultRow } from 'pg';
import type { Pool } from '../../sql/pool.js';
import type { Page, PageRequest } from '../pagination.js';
import { toPage, window } from '../pagination.js';
import { likePrefix } from '../text.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { toUtcRange, type LocalDateFilter } from '../time/local-date-range.js';
import { retentionStart } from './ids.js';

/**
 * The event logs of mails (unsubscribes, complaints): one row per event, each about one mail,
 * listed with the activity listings' filters that apply to them: dates on the event's time,
 * recipient with its operator, mail_id, msg_id.
 */
export interface EventLogFilter extends PageRequest, LocalDateFilter {
  recipient?: string;
  recipient_operator?: 'eq' | 'starts_with';
  mail_id?: string;
  msg_id?: string;
}

/** The fields every event-log row has: the event's id and what identifies its mail (read from the mail). */
export interface EventLogRow {
  id: number;
  mail_id: string;
  msg_id: string;
  recipient: string;
  sender: string | null;
  subject: string;
  custom_msg_id: string | null;
  custom_group_code: string | null;
}

/** What an event log's listing names: its SELECT over the log, and the log's alias and time column. */
export interface EventLogQuery {
  /** Query name, for logs and the prepared statement. */
  name: string;
  /** `SELECT ... FROM <log table> <alias>`; the columns may read the mail as `m`. */
  selectFrom: string;
  alias: string;
  timeColumn: string;
}

/**
 * One page of an event log, newest first, as the tenant. The log is joined to its mail as `m`:
 * the retention bound is on the mail's reception (a mail outside the online window but not yet
 * purged is left out too, so a listing never depends on when the purge last ran), and the
 * recipient is the mail's (the logs keep no copy of it). total_items is null, as in the
 * activity listings.
 */
export async function eventLogPage<T extends EventLogRow & QueryResultRow>(tenant: Tenant, pool: Pool, f: EventLogFilter, q: EventLogQuery): Promise<Page<T>> {
  const log = q.alias;
  const at = `${log}.${q.timeColumn}`;
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<T>({
      name: q.name,
      text: `${q.selectFrom}
               JOIN mails m ON m.instance_id = ${log}.instance_id AND m.mail_id = ${log}.mail_id
              WHERE ${log}.instance_id = $1
                AND m.received_at >= $2
                AND ($3::timestamptz IS NULL OR ${at} >= $3)
                AND ($4::timestamptz IS NULL OR ${at} < $4)
                AND ($5::text IS NULL OR (CASE WHEN $6 THEN lower(m.to_email) LIKE $7 ELSE lower(m.to_email) = $5 END))
                AND ($8::text IS NULL OR ${log}.mail_id = $8)
                AND ($9::text IS NULL OR m.msg_id = $9)
              ORDER BY ${at} DESC, ${log}.id DESC
              LIMIT $10 OFFSET $11`,
      values: eventLogValues(tenant, f),
    }),
  );
  return toPage(rows, f, null);
}

/**
 * The parameters of an event-log page query, in this order: $1 instance, $2 retention start (on
 * the mail's reception), $3/$4 the UTC bounds of the event time, $5 recipient (lower-cased),
 * $6 starts_with?, $7 its LIKE prefix, $8 mail_id, $9 msg_id, $10 limit, $11 offset.
 */
function eventLogValues(tenant: Tenant, f: EventLogFilter): unknown[] {
  const range = toUtcRange(f, tenant.tz);
  const recipient = f.recipient == null ? null : f.recipient.toLowerCase();
  const { limit, offset } = window(f);
  return [
    tenant.instanceId, retentionStart(), range.from, range.to,
    recipient, f.recipient_operator === 'starts_with', recipient === null ? null : likePrefix(recipient),
    f.mail_id ?? null, f.msg_id ?? null, limit, offset,
  ];
}
