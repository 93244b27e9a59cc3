import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventWhere, type EventActivityFilter, type PageWindow } from './filters.js';
import { pageKeys } from './grouped.js';
import { resultColumns, selectList, type ActivityQuery, type ColumnSql } from './query.js';

/**
 * Opens and clicks, group_by=msg_id: one row per message, latest event first, with rcpt_count
 * (every recipient of the message in the `mails` mirror, whatever their status). A page is two
 * passes: the page's msg_ids (grouped.ts), then those messages' events from
 * mail_events_by_msg, where each message's events are contiguous; rcpt_count is looked up for
 * the page's messages only. The export aggregates every event of the range once (FINAL). The
 * plan: docs/analytics.md, "How the listings are built".
 *
 * The events are aggregated twice: per recipient (mail), then per message. A recipient counts
 * as human when one of its events is (recipients_opened_human), which only the per-recipient
 * step can tell when an event is read in several copies; the other figures add up the same.
 */

/**
 * Per recipient (mail) of a message, over the events `e`. `copies`: `e` may hold several copies
 * of one event, so events are distinct event_ids, and the human ones those without a flagged copy
 * (humanCount in grouped.ts says why a flagged copy decides). links: distinct URLs, NULLs skipped.
 */
function perRecipient(k: EventKind, copies: boolean): string {
  return selectList([
    { name: 'msg_id', kind: 'text', sql: 'e.msg_id' },
    { name: 'sender_any', kind: 'text', sql: 'any(e.sender)' },
    { name: 'subject_min', kind: 'text', sql: 'min(e.subject)' },
    { name: 'subject_max', kind: 'text', sql: 'max(e.subject)' },
    { name: 'n', kind: 'number', sql: copies ? 'uniqExact(e.event_id)' : 'count()' },
    { name: 'h', kind: 'number', sql: copies ? "uniqExact(e.event_id) - uniqExactIf(e.event_id, e.machine != '')" : "countIf(e.machine = '')" },
    ...(k.links ? [{ name: 'links', kind: 'number', sql: 'uniqExact(e.url)' } as const] : []),
    { name: 'first_at', kind: 'datetime', sql: 'min(e.occurred_at)' },
    { name: 'last_at', kind: 'datetime', sql: 'max(e.occurred_at)' },
    { name: 'custom_msg_id_any', kind: 'text', sql: 'any(e.custom_msg_id)' },
    { name: 'custom_group_code_any', kind: 'text', sql: 'any(e.custom_group_code)' },
  ]);
}

/**
 * The row (spec: Open rows, Click rows; group_by=msg_id), in its order, then Cartero's human
 * counts: aggregates over the per-recipient rows `m`, except rcpt_count (`lookup`), the mirror's
 * `r.n`. links_clicked: distinct links per recipient, summed over the recipients.
 */
export function messageGroupColumns(k: EventKind): Array<ColumnSql & { lookup?: true }> {
  return [
    { name: 'msg_id', kind: 'text', sql: 'm.msg_id' },
    { name: 'sender', kind: 'text', sql: "ifNull(any(m.sender_any), '')" },
    // null when the recipients' subjects differ (merge tags render a subject per recipient)
    { name: 'subject', kind: 'text', sql: 'if(min(m.subject_min) = max(m.subject_max), min(m.subject_min), NULL)', nullable: true },
    { name: k.columns.count, kind: 'number', sql: 'toUInt32(sum(m.n))' },
    { name: k.columns.recipients, kind: 'number', sql: 'toUInt32(count())' },
    ...(k.links ? [{ name: 'links_clicked', kind: 'number', sql: 'toUInt32(sum(m.links))' } as const] : []),
    { name: 'rcpt_count', kind: 'number', sql: 'toUInt32(r.n)', lookup: true },
    { name: k.columns.first, kind: 'datetime', sql: 'min(m.first_at)' },
    { name: k.columns.last, kind: 'datetime', sql: 'max(m.last_at)' },
    { name: 'custom_msg_id', kind: 'text', sql: 'any(m.custom_msg_id_any)', nullable: true },
    { name: 'custom_group_code', kind: 'text', sql: 'any(m.custom_group_code_any)', nullable: true },
    { name: k.columns.humanCount, kind: 'number', sql: 'toUInt32(sum(m.h))', machine: true },
    { name: k.columns.humanRecipients, kind: 'number', sql: 'toUInt32(countIf(m.h > 0))', machine: true },
  ];
}

export function eventsByMessageQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  const where = eventWhere(tenant, f, k.type);
  const params = { ...where.params };
  // The events' columns the rows read.
  const read = `mail_id, msg_id, sender, subject, ${k.links ? 'url, ' : ''}occurred_at, custom_msg_id, custom_group_code, machine`;
  // Without exclude_machine, a page reads the events as stored, copies included (cheaper than
  // merging them first); with it, each event's newest copy decides, so copies are merged.
  const copies = page !== undefined && !f.exclude_machine;
  let head = '';
  let events: string;
  let messages: string;
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
  }
  const columns = messageGroupColumns(k);
  const aggregates = selectList(columns.filter((c) => !c.lookup));
  const select = selectList(columns.map((c) => (c.lookup ? c : { ...c, sql: `g.\`${c.name}\`` })));
  // rcpt_count: uniqExact(mail_id), not FINAL: the mirror holds one row per snapshot of a mail.
  const sql = `${head}SELECT ${select}
    FROM (SELECT ${aggregates}
            FROM (SELECT ${perRecipient(k, copies)} FROM ${events} GROUP BY e.msg_id, e.mail_id) AS m
           GROUP BY m.msg_id) AS g
    LEFT JOIN (SELECT msg_id, uniqExact(mail_id) AS n FROM mails
               WHERE instance_id = {instance_id:UInt64} AND msg_id IN ${messages}
               GROUP BY msg_id) AS r ON r.msg_id = g.msg_id
    ORDER BY ${k.columns.last} DESC, msg_id DESC`;
  return { name: k.queries.msg_id, columns: resultColumns(columns), params, sql };
}
