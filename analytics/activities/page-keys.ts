import { limitClause, type EventWhere, type PageWindow } from './filters.js';

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
