import type { EventKind } from './event-kind.js';
import { limitClause, type EventWhere, type PageWindow } from './filters.js';
import type { ColumnSql } from './query.js';

/** What the grouped shapes (events-by-mail.ts, events-by-message.ts) share. */

/** A group's first and last event (spec: first_opened_at, last_clicked_at, ...). */
export const firstAndLast = (k: EventKind): ColumnSql[] => [
  { name: k.columns.first, kind: 'datetime', sql: 'min(e.occurred_at)' },
  { name: k.columns.last, kind: 'datetime', sql: 'max(e.occurred_at)' },
];

/**
 * A group's events not flagged machine-made (human_open_count, human_click_count), equal to the
 * count with exclude_machine=true, where each event is judged on its newest copy. `copies`: the
 * events are read as stored, an event possibly more than once; a flag only ever goes from none to
 * a reason (the event pump re-flags earlier clicks of a burst, never the other way), so an event
 * whose newest copy is flagged is one with any flagged copy: the events less the flagged ones.
 */
export const humanCount = (k: EventKind, copies: boolean): ColumnSql => ({
  name: k.columns.humanCount,
  kind: 'number',
  sql: copies ? "toUInt32(uniqExact(e.event_id) - uniqExactIf(e.event_id, e.machine != ''))" : "toUInt32(countIf(e.machine = ''))",
  machine: true,
});

/** The integrator's ids, the same on every event of a mail (and, in practice, of a message). */
export const CUSTOM_IDS: readonly ColumnSql[] = [
  { name: 'custom_msg_id', kind: 'text', sql: 'any(e.custom_msg_id)', nullable: true },
  { name: 'custom_group_code', kind: 'text', sql: 'any(e.custom_group_code)', nullable: true },
];

/**
 * The first pass of a grouped page (group_by mail_id or msg_id), as one scalar `page` the second
 * pass reads: page.1, the keys of the page's groups, latest event first; for mail_id, page.2, the
 * earliest reception of those mails (no event precedes its mail's reception, so the second pass
 * reads from there on). Groups are ordered by their latest event, so the page's keys are the first
 * distinct keys met reading the events newest first, in the table's key order: the read stops
 * after them. For an empty page, min() of nothing is the epoch: no bound, and no key either.
 *
 * Without exclude_machine the events are read as stored: a copy of an event changes neither a
 * key's first row nor its order. With it, each event is judged on its newest copy.
 */
export function pageKeys(key: 'mail_id' | 'msg_id', where: EventWhere, excludeMachine: boolean, page: PageWindow, params: Record<string, unknown>): string {
  const events = excludeMachine
    ? `(SELECT * FROM (SELECT * FROM ${where.table} WHERE ${where.sql} ORDER BY occurred_at DESC, ${key} DESC, event_id DESC, shipped_at DESC LIMIT 1 BY occurred_at, ${key}, event_id) WHERE machine = '')`
    : `${where.table} WHERE ${where.sql}`;
  const keys = `SELECT ${key === 'mail_id' ? 'mail_id, mail_received_at' : 'msg_id'}
      FROM (SELECT * FROM ${events} ORDER BY occurred_at DESC, ${key} DESC LIMIT 1 BY ${key})
      ORDER BY occurred_at DESC, ${key} DESC${limitClause(page, params)}`;
  const value = key === 'mail_id' ? '(groupArray(mail_id), min(mail_received_at))' : 'tuple(groupArray(msg_id))';
  return `WITH (SELECT ${value} FROM (${keys})) AS page
    `;
}
