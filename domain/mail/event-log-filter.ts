import type { PageRequest } from '../pagination.js';
import { window } from '../pagination.js';
import { likePrefix } from '../text.js';
import type { Tenant } from '../tenancy/context.js';
import { toUtcRange, type LocalDateFilter } from '../time/local-date-range.js';
import { retentionStart } from './ids.js';

/**
 * The activity listings' filters that apply to an event log of mails (unsubscribes, complaints):
 * dates on the event's time, recipient with its operator, mail_id, msg_id.
 */
export interface EventLogFilter extends PageRequest, LocalDateFilter {
  recipient?: string;
  recipient_operator?: 'eq' | 'starts_with';
  mail_id?: string;
  msg_id?: string;
}

/**
 * The WHERE, ORDER BY and LIMIT of an event-log page query over `log` (alias of the event table,
 * with `mail_id`, `id` and the event time `timeColumn`) joined to its mail as `m`, reading the
 * parameters of eventLogValues by position. Newest first; the retention bound is on the mail's
 * reception, and the recipient is the mail's (the logs keep no copy of it).
 */
export function eventLogClause(log: string, timeColumn: string): string {
  const at = `${log}.${timeColumn}`;
  return `WHERE ${log}.instance_id = $1
                AND m.received_at >= $2
                AND ($3::timestamptz IS NULL OR ${at} >= $3)
                AND ($4::timestamptz IS NULL OR ${at} < $4)
                AND ($5::text IS NULL OR (CASE WHEN $6 THEN lower(m.to_email) LIKE $7 ELSE lower(m.to_email) = $5 END))
                AND ($8::text IS NULL OR ${log}.mail_id = $8)
                AND ($9::text IS NULL OR m.msg_id = $9)
              ORDER BY ${at} DESC, ${log}.id DESC
              LIMIT $10 OFFSET $11`;
}

/**
 * The parameters of an event-log page query (eventLogClause), in this order: $1 instance, $2 retention start (on
 * the mail's reception), $3/$4 the UTC bounds of the event time, $5 recipient (lower-cased),
 * $6 starts_with?, $7 its LIKE prefix, $8 mail_id, $9 msg_id, $10 limit, $11 offset. One place,
 * so every event log reads its filters the same way.
 */
export function eventLogValues(tenant: Tenant, f: EventLogFilter): unknown[] {
  const range = toUtcRange(f, tenant.tz);
  const recipient = f.recipient == null ? null : f.recipient.toLowerCase();
  const { limit, offset } = window(f);
  return [
    tenant.instanceId, retentionStart(), range.from, range.to,
    recipient, f.recipient_operator === 'starts_with', recipient === null ? null : likePrefix(recipient),
    f.mail_id ?? null, f.msg_id ?? null, limit, offset,
  ];
}
