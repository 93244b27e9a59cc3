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
 * GET /v1/activities/clicks (and its export): click events of `mail_events`, one range read on
 * (instance_id, event_type, occurred_at), dates on the click's time. Three row shapes (spec:
 * Click rows); grouped counts come from the same filtered events as the detail rows. A link is
 * the clicked URL; clicks without a URL count as clicks but not as links.
 */

const NONE_COLUMNS = [
  { name: 'mail_id', kind: 'text' },
  { name: 'msg_id', kind: 'text' },
  { name: 'to', kind: 'text' },
  { name: 'sender', kind: 'text' },
  { name: 'url_redirect', kind: 'text' },
  { name: 'clicked_at', kind: 'datetime' },
  { name: 'sent_at', kind: 'datetime' },
  { name: 'custom_msg_id', kind: 'text' },
  { name: 'custom_group_code', kind: 'text' },
] as const;

const MAIL_COLUMNS = [
  { name: 'mail_id', kind: 'text' },
  { name: 'msg_id', kind: 'text' },
  { name: 'to', kind: 'text' },
  { name: 'sender', kind: 'text' },
  { name: 'click_count', kind: 'number' },
  { name: 'links_clicked', kind: 'number' },
  { name: 'first_clicked_at', kind: 'datetime' },
  { name: 'last_clicked_at', kind: 'datetime' },
  { name: 'sent_at', kind: 'datetime' },
  { name: 'custom_msg_id', kind: 'text' },
  { name: 'custom_group_code', kind: 'text' },
] as const;

const MESSAGE_COLUMNS = [
  { name: 'msg_id', kind: 'text' },
  { name: 'sender', kind: 'text' },
  { name: 'subject', kind: 'text' },
  { name: 'click_count', kind: 'number' },
  { name: 'recipients_clicked', kind: 'number' },
  { name: 'links_clicked', kind: 'number' },
  { name: 'rcpt_count', kind: 'number' },
  { name: 'first_clicked_at', kind: 'datetime' },
  { name: 'last_clicked_at', kind: 'datetime' },
  { name: 'custom_msg_id', kind: 'text' },
  { name: 'custom_group_code', kind: 'text' },
] as const;

export function clicksQuery(tenant: Tenant, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  const where = eventWhere(tenant, f, 'click');
  const params = { ...where.params };
  const after = machineCondition(f);
  const mode = f.group_by ?? 'none';

  if (mode === 'none') {
    return {
      name: 'clicks.group_by_none',
      columns: NONE_COLUMNS,
      params,
      sql: latestRows({
        table: 'mail_events',
        where,
        after,
        keyDesc: 'occurred_at DESC, event_id DESC',
        key: 'occurred_at, event_id',
        version: 'shipped_at',
        select: `mail_id, msg_id, recipient AS \`to\`, ifNull(sender, '') AS sender, url AS url_redirect, occurred_at AS clicked_at,
                 sent_at, custom_msg_id, custom_group_code`,
        page,
        params,
      }),
    };
  }

  if (mode === 'mail_id') {
    return {
      name: 'clicks.group_by_mail_id',
      columns: MAIL_COLUMNS,
      params,
      sql: groupedByMail({
        where,
        after,
        params,
        page,
        columns: 'mail_id, msg_id, recipient, sender, url, occurred_at, sent_at, custom_msg_id, custom_group_code',
        aggregates: `e.mail_id AS mail_id, any(e.msg_id) AS msg_id, any(e.recipient) AS \`to\`, ifNull(any(e.sender), '') AS sender,
          toUInt32(count()) AS click_count, toUInt32(uniqExact(e.url)) AS links_clicked,
          min(e.occurred_at) AS first_clicked_at, max(e.occurred_at) AS last_clicked_at,
          max(e.sent_at) AS sent_at, any(e.custom_msg_id) AS custom_msg_id, any(e.custom_group_code) AS custom_group_code`,
        last: 'last_clicked_at',
      }),
    };
  }

  // links_clicked of a message: distinct links per recipient, summed over recipients, i.e. the
  // distinct (mail, url) pairs (uniqExact skips the rows whose url is NULL).
  return {
    name: 'clicks.group_by_msg_id',
    columns: MESSAGE_COLUMNS,
    params,
    sql: groupedByMessage({
      where,
      after,
      params,
      page,
      columns: 'mail_id, msg_id, sender, subject, url, occurred_at, custom_msg_id, custom_group_code',
      aggregates: `e.msg_id AS msg_id, ifNull(any(e.sender), '') AS sender, ${messageSubject} AS subject,
        toUInt32(count()) AS click_count, toUInt32(uniqExact(e.mail_id)) AS recipients_clicked,
        toUInt32(uniqExact(e.mail_id, e.url)) AS links_clicked,
        min(e.occurred_at) AS first_clicked_at, max(e.occurred_at) AS last_clicked_at,
        any(e.custom_msg_id) AS custom_msg_id, any(e.custom_group_code) AS custom_group_code`,
      select: `g.msg_id AS msg_id, g.sender AS sender, g.subject AS subject, g.click_count AS click_count,
        g.recipients_clicked AS recipients_clicked, g.links_clicked AS links_clicked, toUInt32(r.n) AS rcpt_count,
        g.first_clicked_at AS first_clicked_at, g.last_clicked_at AS last_clicked_at, g.custom_msg_id AS custom_msg_id,
        g.custom_group_code AS custom_group_code`,
      last: 'last_clicked_at',
    }),
  };
}

/**
 * Whether the clicks listing counts total_items: with group_by=none (the spec: always null when
 * grouped), unless a subject filter is given. The page reads events newest-first and stops once
 * it is full; a count must test every event of the range, and a partial subject match is the one
 * filter that then reads and scans every subject string of the range (the others compare short
 * keys, or are narrowed by the msg_id/mail_id skip indexes).
 */
export function clicksCounted(f: EventActivityFilter): boolean {
  return (f.group_by ?? 'none') === 'none' && f.subject === undefined;
}

/** total_items of the clicks listing (when clicksCounted): the events of the listing, exactly. */
export function clicksCountQuery(tenant: Tenant, f: EventActivityFilter): CountQuery {
  const where = eventWhere(tenant, f, 'click');
  return {
    name: 'clicks.count',
    sql: eventCountSql(where, f),
    params: where.params,
  };
}

/** GET /v1/activities/clicks: total_items per clicksCounted, has_more always. */
export function listClicks(tenant: Tenant, ch: ClickHouseClient, f: EventActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  return fetchPage(ch, (page) => clicksQuery(tenant, f, page), f, clicksCounted(f) ? clicksCountQuery(tenant, f) : undefined);
}
