import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventWhere, limitClause, type EventActivityFilter, type PageWindow } from './filters.js';
import type { CountQuery } from './listing.js';
import { resultColumns, selectList, type ActivityQuery, type ColumnSql } from './query.js';

/**
 * Opens and clicks, group_by=none: one row per event, newest first, and the count behind
 * total_items. Read from mail_events (mail_events_by_group with a campaign filter), where one
 * event may still be stored more than once (a re-shipped batch, a re-flagged event): the rows
 * are each event's newest copy. The plan: docs/analytics.md, "How the listings are built".
 */

/** The row (spec: Open rows, Click rows; group_by=none), in its order. */
export function eventRowColumns(k: EventKind): ColumnSql[] {
  return [
    { name: 'mail_id', kind: 'text', sql: 'mail_id' },
    { name: 'msg_id', kind: 'text', sql: 'msg_id' },
    { name: 'to', kind: 'text', sql: 'recipient' },
    { name: 'sender', kind: 'text', sql: "ifNull(sender, '')" },
    ...(k.links ? [{ name: 'url_redirect', kind: 'text', sql: 'url', nullable: true } as const] : []),
    { name: k.columns.at, kind: 'datetime', sql: 'occurred_at' },
    { name: 'sent_at', kind: 'datetime', sql: 'sent_at', nullable: true },
    { name: 'custom_msg_id', kind: 'text', sql: 'custom_msg_id', nullable: true },
    { name: 'custom_group_code', kind: 'text', sql: 'custom_group_code', nullable: true },
    // The reason the event was judged machine-made (docs/tracking.md), null for a human one.
    { name: 'machine', kind: 'text', sql: "nullIf(machine, '')", nullable: true, machine: true },
  ];
}

export function eventRowsQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  const where = eventWhere(tenant, f, k.type);
  const params = { ...where.params };
  const columns = eventRowColumns(k);
  const select = selectList(columns);
  // The export: every event of the range once, merged by FINAL in constant memory.
  // A page: read newest first in key order, keep each event's newest copy (highest shipped_at),
  // stop when full; `SELECT *` inside on purpose: an explicit list makes the ORDER BY a full sort.
  // The flag is qualified (`ev.machine`, `${where.table}.machine`): the row's own `machine`
  // (nullIf(machine, '')) is an alias of the same name, which a bare name in WHERE would mean.
  const sql = page
    ? `SELECT ${select}
    FROM (SELECT * FROM ${where.table} WHERE ${where.sql}
          ORDER BY occurred_at DESC, event_id DESC, shipped_at DESC LIMIT 1 BY occurred_at, event_id) AS ev
    ${f.exclude_machine ? "WHERE ev.machine = ''" : ''}
    ORDER BY occurred_at DESC, event_id DESC${limitClause(page, params)}`
    : `SELECT ${select} FROM ${where.table} FINAL WHERE ${where.sql}${f.exclude_machine ? ` AND ${where.table}.machine = ''` : ''} ORDER BY occurred_at DESC, event_id DESC`;
  return { name: k.queries.none, columns: resultColumns(columns), params, sql };
}

/**
 * total_items of the ungrouped listing: its events, each counted once, without FINAL (which
 * merges every row of the range). Every copy of an event has the same event_id, unique within the
 * tenant and type, so the distinct event_ids are the events; with exclude_machine, each event's
 * newest flag decides, as in the listing.
 */
export function eventCountQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter): CountQuery {
  const { table, sql: where, params } = eventWhere(tenant, f, k.type);
  const sql = f.exclude_machine
    ? `SELECT count() AS n FROM (SELECT argMax(machine, shipped_at) AS newest_machine FROM ${table}
    WHERE ${where} GROUP BY event_id) WHERE newest_machine = ''`
    : `SELECT uniqExact(event_id) AS n FROM ${table} WHERE ${where}`;
  return { name: k.queries.count, sql, params };
}
