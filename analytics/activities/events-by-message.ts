import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventWhere, type EventActivityFilter, type PageWindow } from './filters.js';
import { CUSTOM_IDS, firstAndLast, humanCount, pageKeys } from './grouped.js';
import { resultColumns, selectList, type ActivityQuery, type ColumnSql } from './query.js';

/**
 * Opens and clicks, group_by=msg_id: one row per message, latest event first, with rcpt_count
 * (every recipient of the message in the `mails` mirror, whatever their status). A page is two
 * passes: the page's msg_ids (grouped.ts), then those messages' events from
 * mail_events_by_msg, where each message's events are contiguous; rcpt_count is looked up for
 * the page's messages only. The export aggregates every event of the range once (FINAL). The
 * plan: docs/analytics.md, "How the listings are built".
 */

/**
 * The row (spec: Open rows, Click rows; group_by=msg_id), in its order: aggregates over the
 * events `e`, except rcpt_count (`lookup`), the mirror's `r.n`. `copies` as in
 * events-by-mail.ts. links_clicked: distinct links per recipient, summed over the recipients,
 * i.e. the distinct (mail, url) pairs (uniqExact skips the pairs whose url is NULL).
 */
/**
 * `flagged`, with copies: a query of the event_ids with a flagged copy among the events read,
 * so that a recipient whose only unflagged-looking event has a flagged newer copy is not counted
 * human (humanCount in grouped.ts says why a flagged copy decides).
 */
export function messageGroupColumns(k: EventKind, copies: boolean, flagged?: string): Array<ColumnSql & { lookup?: true }> {
  const humanEvent = copies && flagged ? `e.machine = '' AND e.event_id NOT IN (${flagged})` : "e.machine = ''";
  return [
    { name: 'msg_id', kind: 'text', sql: 'e.msg_id' },
    { name: 'sender', kind: 'text', sql: "ifNull(any(e.sender), '')" },
    // null when the recipients' subjects differ (merge tags render a subject per recipient)
    { name: 'subject', kind: 'text', sql: 'if(min(e.subject) = max(e.subject), min(e.subject), NULL)', nullable: true },
    { name: k.columns.count, kind: 'number', sql: copies ? 'toUInt32(uniqExact(e.event_id))' : 'toUInt32(count())' },
    { name: k.columns.recipients, kind: 'number', sql: 'toUInt32(uniqExact(e.mail_id))' },
    ...(k.links ? [{ name: 'links_clicked', kind: 'number', sql: 'toUInt32(uniqExact(e.mail_id, e.url))' } as const] : []),
    { name: 'rcpt_count', kind: 'number', sql: 'toUInt32(r.n)', lookup: true },
    ...firstAndLast(k),
    ...CUSTOM_IDS,
    humanCount(k, copies),
    { name: k.columns.humanRecipients, kind: 'number', sql: `toUInt32(uniqExactIf(e.mail_id, ${humanEvent}))`, machine: true },
  ];
}

export function eventsByMessageQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  const where = eventWhere(tenant, f, k.type);
  const params = { ...where.params };
  // The events' columns the row reads.
  const read = `mail_id, msg_id, sender, subject, ${k.links ? 'url, ' : ''}occurred_at, custom_msg_id, custom_group_code, machine`;
  const copies = page !== undefined && !f.exclude_machine;
  let head = '';
  let events: string;
  let messages: string;
  let flagged: string | undefined;
  if (!page) {
    events = `(SELECT ${read} FROM ${where.table} FINAL WHERE ${where.sql}${f.exclude_machine ? " AND machine = ''" : ''}) AS e`;
    // A superset is harmless: only the listed messages are joined.
    messages = `(SELECT msg_id FROM ${where.table} WHERE ${where.sql})`;
  } else {
    head = pageKeys('msg_id', where, f.exclude_machine === true, page, params);
    const pageEvents = `${where.sql} AND msg_id IN (SELECT arrayJoin(page.1))`;
    // With exclude_machine, FINAL over the messages' short key ranges: cheaper than sorting.
    events = f.exclude_machine
      ? `(SELECT ${read} FROM mail_events_by_msg FINAL WHERE ${pageEvents} AND machine = '') AS e`
      : `(SELECT event_id, ${read} FROM mail_events_by_msg WHERE ${pageEvents}) AS e`;
    messages = '(SELECT arrayJoin(page.1))';
    flagged = `SELECT event_id FROM mail_events_by_msg WHERE ${pageEvents} AND machine != ''`;
  }
  const columns = messageGroupColumns(k, copies, flagged);
  const aggregates = selectList(columns.filter((c) => !c.lookup));
  const select = selectList(columns.map((c) => (c.lookup ? c : { ...c, sql: `g.\`${c.name}\`` })));
  // rcpt_count: uniqExact(mail_id), not FINAL: the mirror holds one row per snapshot of a mail.
  const sql = `${head}SELECT ${select}
    FROM (SELECT ${aggregates} FROM ${events} GROUP BY e.msg_id) AS g
    LEFT JOIN (SELECT msg_id, uniqExact(mail_id) AS n FROM mails
               WHERE instance_id = {instance_id:UInt64} AND msg_id IN ${messages}
               GROUP BY msg_id) AS r ON r.msg_id = g.msg_id
    ORDER BY ${k.columns.last} DESC, msg_id DESC`;
  return { name: k.queries.msg_id, columns: resultColumns(columns), params, sql };
}
