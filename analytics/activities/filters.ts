import type { Tenant } from '../../domain/tenancy/context.js';
import { toUtcRange } from '../../domain/time/local-date-range.js';
import type { ActivityFilter } from '../../domain/mail/mails.js';
import { chDateTime } from '../client.js';

/** The common filters of the activity listings, defined once with GET /v1/mails's. */
export type { ActivityFilter };

export type GroupBy = 'none' | 'mail_id' | 'msg_id';

/** Opens and clicks: the common filters, the row shape, and the machine-made exclusion. */
export interface EventActivityFilter extends ActivityFilter {
  /** none when omitted. */
  group_by?: GroupBy;
  /** Leave out events flagged as machine-made (docs/tracking.md); false when omitted. */
  exclude_machine?: boolean;
}

/**
 * Rows [offset, offset + limit) of a query's ordered result. Builders take it optionally: without
 * it (the exports) the query has no LIMIT; with it (the listings) the LIMIT goes where it makes the
 * query cheapest, which is not always the outermost SELECT (the grouped shapes page their keys).
 */
export interface PageWindow {
  limit: number;
  offset: number;
}

export const DATETIME_PARAM = `DateTime64(3, 'UTC')`;

export interface Where {
  /** Conditions joined with AND; always starts with the tenant. */
  sql: string;
  params: Record<string, unknown>;
}

/**
 * The common filters as one WHERE clause and its parameters, for the events (`mail_events` and
 * its sorted copies; time column occurred_at, the event's time) or the `mails` mirror
 * (received_at): the tables name the mail's attributes alike. Only the shape of the clause
 * depends on which filters are present; every value is a `{name:Type}` parameter. Dates are the
 * spec's local dates in tz (else the instance's zone, else UTC), converted once by toUtcRange
 * (422 for a bad zone or date).
 *
 * Recipients are stored lower-case, so the filter value is lower-cased (exact or prefix). The
 * subject filter is a case-insensitive substring (positionCaseInsensitiveUTF8: no pattern, so
 * nothing to escape). A `+` sent unencoded arrives here as a space and matches no address.
 */
export function activityWhere(
  tenant: Tenant,
  f: ActivityFilter,
  timeColumn: 'occurred_at' | 'received_at',
  eventType?: 'open' | 'click',
): Where {
  const range = toUtcRange(f, tenant.tz);
  const conditions = ['instance_id = {instance_id:UInt64}'];
  const params: Record<string, unknown> = { instance_id: tenant.instanceId };
  const add = (condition: string, name: string, value: unknown) => {
    conditions.push(condition);
    params[name] = value;
  };
  // The type is ours, not the client's, but stays a parameter like everything else.
  if (eventType) add('event_type = {event_type:String}', 'event_type', eventType);
  if (range.from) add(`${timeColumn} >= {from:${DATETIME_PARAM}}`, 'from', chDateTime(range.from));
  if (range.to) add(`${timeColumn} < {to:${DATETIME_PARAM}}`, 'to', chDateTime(range.to));
  if (f.msg_id !== undefined) add('msg_id = {msg_id:String}', 'msg_id', f.msg_id);
  if (f.mail_id !== undefined) add('mail_id = {mail_id:String}', 'mail_id', f.mail_id);
  if (f.sender_id !== undefined) add('sender_id = {sender_id:UInt64}', 'sender_id', f.sender_id);
  if (f.recipient !== undefined) {
    const recipient = f.recipient.toLowerCase();
    if (f.recipient_operator === 'starts_with') add('startsWith(recipient, {recipient:String})', 'recipient', recipient);
    else add('recipient = {recipient:String}', 'recipient', recipient);
  }
  if (f.custom_msg_id !== undefined) add('custom_msg_id = {custom_msg_id:String}', 'custom_msg_id', f.custom_msg_id);
  if (f.custom_group_code !== undefined) add('custom_group_code = {custom_group_code:String}', 'custom_group_code', f.custom_group_code);
  if (f.subject !== undefined) add('positionCaseInsensitiveUTF8(subject, {subject:String}) > 0', 'subject', f.subject);
  return { sql: conditions.join(' AND '), params };
}

/** The common filters over opens or clicks, and the table of events that serves them. */
export interface EventWhere extends Where {
  table: 'mail_events' | 'mail_events_by_group';
}

/**
 * The common filters over one event type, a range of the key (instance_id, event_type,
 * [custom_group_code,] occurred_at): with a campaign filter the campaign-sorted copy
 * mail_events_by_group, which holds the same open and click rows with a code (docs/analytics.md,
 * "How the listings are built").
 */
export function eventWhere(tenant: Tenant, f: ActivityFilter, eventType: 'open' | 'click'): EventWhere {
  const table = f.custom_group_code !== undefined ? 'mail_events_by_group' : 'mail_events';
  return { ...activityWhere(tenant, f, 'occurred_at', eventType), table };
}

/** ` LIMIT ... OFFSET ...` of a page window, parameters included; '' without one. */
export function limitClause(page: PageWindow | undefined, params: Record<string, unknown>): string {
  if (!page) return '';
  params.page_limit = page.limit;
  params.page_offset = page.offset;
  return ' LIMIT {page_limit:UInt32} OFFSET {page_offset:UInt64}';
}
