import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import {
  eventCountSql,
  eventWhere,
  fetchPage,
  groupedByMail,
  groupedByMessage,
  latestRows,
  machineCondition,
  messageSubject,
  type CountQuery,
  type EventActivityFilter,
  type PageWindow,
} from './filters.js';
import type { ActivityQuery } from './query.js';

/**
 * GET /v1/activities/opens (and its export): open events of `mail_events`, one range read on
 * (instance_id, event_type, occurred_at), dates on the open's time. Three row shapes (spec: Open
 * rows); the grouped counts come from the same filtered events, so they equal the sum of the
 * detail rows. Machine-made opens count like any other unless exclude_machine is set.
 */

const NONE_COLUMNS = [
  { name: 'mail_id', kind: 'text' },
  { name: 'msg_id', kind: 'text' },
  { name: 'to', kind: 'text' },
  { name: 'sender', kind: 'text' },
  { name: 'opened_at', kind: 'datetime' },
  { name: 'sent_at', kind: 'datetime' },
  { name: 'custom_msg_id', kind: 'text' },
  { name: 'custom_group_code', kind: 'text' },
] as const;

const MAIL_COLUMNS = [
  { name: 'mail_id', kind: 'text' },
  { name: 'msg_id', kind: 'text' },
  { name: 'to', kind: 'text' },
  { name: 'sender', kind: 'text' },
  { name: 'open_count', kind: 'number' },
  { name: 'first_opened_at', kind: 'datetime' },
  { name: 'last_opened_at', kind: 'datetime' },
  { name: 'sent_at', kind: 'datetime' },
  { name: 'custom_msg_id', kind: 'text' },
  { name: 'custom_group_code', kind: 'text' },
] as const;

const MESSAGE_COLUMNS = [
  { name: 'msg_id', kind: 'text' },
  { name: 'sender', kind: 'text' },
  { name: 'subject', kind: 'text' },
  { name: 'open_count', kind: 'number' },
  { name: 'recipients_opened', kind: 'number' },
  { name: 'rcpt_count', kind: 'number' },
  { name: 'first_opened_at', kind: 'datetime' },
  { name: 'last_opened_at', kind: 'datetime' },
  { name: 'custom_msg_id', kind: 'text' },
  { name: 'custom_group_code', kind: 'text' },
] as const;

export function opensQuery(tenant: Tenant, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  const where = eventWhere(tenant, f, 'open');
  const params = { ...where.params };
  const after = machineCondition(f);
  const mode = f.group_by ?? 'none';

  if (mode === 'none') {
    return {
      name: 'opens.group_by_none',
      columns: NONE_COLUMNS,
      params,
      sql: latestRows({
        table: 'mail_events',
        where,
        after,
        keyDesc: 'occurred_at DESC, event_id DESC',
        key: 'occurred_at, event_id',
        version: 'shipped_at',
        select: `mail_id, msg_id, recipient AS \`to\`, ifNull(sender, '') AS sender, occurred_at AS opened_at, sent_at,
                 custom_msg_id, custom_group_code`,
        page,
        params,
      }),
    };
  }

  if (mode === 'mail_id') {
    return {
      name: 'opens.group_by_mail_id',
      columns: MAIL_COLUMNS,
      params,
      sql: groupedByMail({
        where,
        after,
        params,
        page,
        columns: 'mail_id, msg_id, recipient, sender, occurred_at, sent_at, custom_msg_id, custom_group_code',
        aggregates: `e.mail_id AS mail_id, any(e.msg_id) AS msg_id, any(e.recipient) AS \`to\`, ifNull(any(e.sender), '') AS sender,
          toUInt32(count()) AS open_count, min(e.occurred_at) AS first_opened_at, max(e.occurred_at) AS last_opened_at,
          max(e.sent_at) AS sent_at, any(e.custom_msg_id) AS custom_msg_id, any(e.custom_group_code) AS custom_group_code`,
        last: 'last_opened_at',
      }),
    };
  }

  return {
    name: 'opens.group_by_msg_id',
    columns: MESSAGE_COLUMNS,
    params,
    sql: groupedByMessage({
      where,
      after,
      params,
      page,
      columns: 'mail_id, msg_id, sender, subject, occurred_at, custom_msg_id, custom_group_code',
      aggregates: `e.msg_id AS msg_id, ifNull(any(e.sender), '') AS sender, ${messageSubject} AS subject,
        toUInt32(count()) AS open_count, toUInt32(uniqExact(e.mail_id)) AS recipients_opened,
        min(e.occurred_at) AS first_opened_at, max(e.occurred_at) AS last_opened_at,
        any(e.custom_msg_id) AS custom_msg_id, any(e.custom_group_code) AS custom_group_code`,
      select: `g.msg_id AS msg_id, g.sender AS sender, g.subject AS subject, g.open_count AS open_count,
        g.recipients_opened AS recipients_opened, toUInt32(r.n) AS rcpt_count, g.first_opened_at AS first_opened_at,
        g.last_opened_at AS last_opened_at, g.custom_msg_id AS custom_msg_id, g.custom_group_code AS custom_group_code`,
      last: 'last_opened_at',
    }),
  };
}

/** total_items of group_by=none: the events of the listing, counted exactly. */
export function opensCountQuery(tenant: Tenant, f: EventActivityFilter): CountQuery {
  const where = eventWhere(tenant, f, 'open');
  return {
    name: 'opens.count',
    sql: eventCountSql(where, f),
    params: where.params,
  };
}

/** GET /v1/activities/opens: total_items only with group_by=none (spec), has_more always. */
export function listOpens(tenant: Tenant, ch: ClickHouseClient, f: EventActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  const count = (f.group_by ?? 'none') === 'none' ? opensCountQuery(tenant, f) : undefined;
  return fetchPage(ch, (page) => opensQuery(tenant, f, page), f, count);
}
