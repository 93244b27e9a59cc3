import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventWhere, type EventActivityFilter, type PageWindow } from './filters.js';
import { CUSTOM_IDS, firstAndLast, humanCount, pageKeys } from './grouped.js';
import { resultColumns, selectList, type ActivityQuery, type ColumnSql } from './query.js';

/**
 * Opens and clicks, group_by=mail_id: one row per recipient, latest event first. A page is two
 * passes: the page's mail_ids (grouped.ts), then the events of those mails only, from their
 * earliest reception on (the events' mail_id bloom filter index helps). The export aggregates
 * every event of the range once (FINAL). The plan: docs/analytics.md, "How the listings are built".
 */

/**
 * The row (spec: Open rows, Click rows; group_by=mail_id), in its order, over the events `e`.
 * `copies`: `e` may hold several copies of one event, so the count counts distinct event_ids
 * (min, max, any and uniqExact are unchanged by copies). links_clicked: distinct URLs, NULLs skipped.
 */
export function mailGroupColumns(k: EventKind, copies: boolean): ColumnSql[] {
  return [
    { name: 'mail_id', kind: 'text', sql: 'e.mail_id' },
    { name: 'msg_id', kind: 'text', sql: 'any(e.msg_id)' },
    { name: 'to', kind: 'text', sql: 'any(e.recipient)' },
    { name: 'sender', kind: 'text', sql: "ifNull(any(e.sender), '')" },
    { name: k.columns.count, kind: 'number', sql: copies ? 'toUInt32(uniqExact(e.event_id))' : 'toUInt32(count())' },
    ...(k.links ? [{ name: 'links_clicked', kind: 'number', sql: 'toUInt32(uniqExact(e.url))' } as const] : []),
    ...firstAndLast(k),
    // A re-shipped event reads sent_at again from its mail: it only moves forward.
    { name: 'sent_at', kind: 'datetime', sql: 'max(e.sent_at)', nullable: true },
    ...CUSTOM_IDS,
    humanCount(k, copies),
  ];
}

export function eventsByMailQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  const where = eventWhere(tenant, f, k.type);
  const params = { ...where.params };
  // The events' columns the row reads.
  const read = `mail_id, msg_id, sender, recipient, sent_at, ${k.links ? 'url, ' : ''}occurred_at, custom_msg_id, custom_group_code, machine`;
  // Without exclude_machine, a page reads the events as stored, copies included (cheaper than
  // merging them first); with it, each event's newest copy decides, so copies are merged.
  const copies = page !== undefined && !f.exclude_machine;
  let head = '';
  let events: string;
  if (!page) {
    events = `(SELECT ${read} FROM ${where.table} FINAL WHERE ${where.sql}${f.exclude_machine ? " AND machine = ''" : ''}) AS e`;
  } else {
    head = pageKeys('mail_id', where, f.exclude_machine === true, page, params);
    const pageEvents = `${where.sql} AND mail_id IN (SELECT arrayJoin(page.1)) AND occurred_at >= page.2`;
    events = f.exclude_machine
      ? `(SELECT * FROM (SELECT * FROM ${where.table} WHERE ${pageEvents} ORDER BY occurred_at DESC, event_id DESC, shipped_at DESC LIMIT 1 BY occurred_at, event_id) WHERE machine = '') AS e`
      : `(SELECT event_id, ${read} FROM ${where.table} WHERE ${pageEvents}) AS e`;
  }
  const columns = mailGroupColumns(k, copies);
  const sql = `${head}SELECT ${selectList(columns)}
    FROM ${events}
    GROUP BY e.mail_id
    ORDER BY ${k.columns.last} DESC, mail_id DESC`;
  return { name: k.queries.mail_id, columns: resultColumns(columns), params, sql };
}
