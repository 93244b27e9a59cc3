import type { ClickHouseClient } from '@clickhouse/client';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventWhere, type EventActivityFilter, type PageWindow } from './filters.js';
import { CUSTOM_IDS, firstAndLast, humanCount, pageKeys } from './grouped.js';
import { ACTIVITY_SETTINGS, resultColumns, selectList, type ActivityQuery, type ColumnSql } from './query.js';

/**
 * Opens and clicks, group_by=msg_id: one row per message, latest event first, with rcpt_count
 * (every recipient of the message in the `mails` mirror, whatever their status). A page is two
 * passes: the page's msg_ids (grouped.ts), then those messages' events from
 * mail_events_by_msg, where each message's events are contiguous; rcpt_count is looked up for
 * the page's messages only. The export aggregates every event of the range once (FINAL). The
 * plan: docs/analytics.md, "How the listings are built".
 *
 * recipients_opened_human (clicked): the recipients with an event no copy of which is flagged.
 * Read once per event (the export, and pages with exclude_machine, merge copies with FINAL), or
 * on a page whose events of a message have no copies (nearly always: copies are a re-shipped
 * batch or a re-flagged click not merged yet), that is the recipients with an unflagged row,
 * counted in the one pass. A page's message read with copies of an event is counted again
 * exactly, per recipient then per message, for those messages only (settle). Aggregating every
 * page per recipient first made the pages 10-30 % slower (bench/analytics).
 */

/** The page's column that names the messages read with copies (left out of the rows by settle). */
const COPIED = 'copied';

/**
 * The row (spec: Open rows, Click rows; group_by=msg_id), in its order, then Cartero's human
 * counts: aggregates over the events `e`, except rcpt_count (`lookup`), the mirror's `r.n`.
 * `copies`: `e` may hold several copies of one event, so events are distinct event_ids.
 * links_clicked: distinct links per recipient, summed over the recipients, i.e. the distinct
 * (mail, url) pairs (uniqExact skips the pairs whose url is NULL).
 */
export function messageGroupColumns(k: EventKind, copies = false): Array<ColumnSql & { lookup?: true }> {
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
    // Exact without copies; a page's message with copies is counted again by settle.
    { name: k.columns.humanRecipients, kind: 'number', sql: "toUInt32(uniqExactIf(e.mail_id, e.machine = ''))", machine: true },
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
  const columns: Array<ColumnSql & { lookup?: true }> = [
    ...messageGroupColumns(k, copies),
    ...(copies ? [{ name: COPIED, kind: 'number', sql: 'toUInt8(count() != uniqExact(e.event_id))' } as const] : []),
  ];
  const aggregates = selectList(columns.filter((c) => !c.lookup));
  const select = selectList(columns.map((c) => (c.lookup ? c : { ...c, sql: `g.\`${c.name}\`` })));
  // rcpt_count: uniqExact(mail_id), not FINAL: the mirror holds one row per snapshot of a mail.
  const sql = `${head}SELECT ${select}
    FROM (SELECT ${aggregates} FROM ${events} GROUP BY e.msg_id) AS g
    LEFT JOIN (SELECT msg_id, uniqExact(mail_id) AS n FROM mails
               WHERE instance_id = {instance_id:UInt64} AND msg_id IN ${messages}
               GROUP BY msg_id) AS r ON r.msg_id = g.msg_id
    ORDER BY ${k.columns.last} DESC, msg_id DESC`;
  const query: ActivityQuery = { name: k.queries.msg_id, columns: resultColumns(columns), params, sql };
  if (copies) query.settle = (ch, rows) => settleHumanRecipients(ch, tenant, k, f, rows);
  return query;
}

/**
 * The page's rows without the COPIED column, and, for the messages read with copies, the exact
 * human recipients: per recipient, its events less those with a flagged copy (humanCount in
 * grouped.ts says why a flagged copy decides), then the recipients with some left.
 */
async function settleHumanRecipients(
  ch: ClickHouseClient,
  tenant: Tenant,
  k: EventKind,
  f: EventActivityFilter,
  rows: Array<Record<string, unknown>>,
): Promise<Array<Record<string, unknown>>> {
  const copied = rows.filter((r) => r[COPIED] === 1).map((r) => r.msg_id as string);
  const exact = new Map<string, number>();
  if (copied.length) {
    const where = eventWhere(tenant, f, k.type);
    const rs = await ch.query({
      query: `SELECT msg_id, toUInt32(countIf(h > 0)) AS n
        FROM (SELECT msg_id, mail_id, uniqExact(event_id) - uniqExactIf(event_id, machine != '') AS h
                FROM mail_events_by_msg WHERE ${where.sql} AND msg_id IN {copied:Array(String)}
               GROUP BY msg_id, mail_id)
        GROUP BY msg_id`,
      query_params: { ...where.params, copied },
      format: 'JSONEachRow',
      clickhouse_settings: { ...ACTIVITY_SETTINGS, log_comment: `${k.queries.msg_id}.copies` },
    });
    for (const r of await rs.json<{ msg_id: string; n: number }>()) exact.set(r.msg_id, Number(r.n));
  }
  return rows.map(({ [COPIED]: _copied, ...row }) =>
    exact.has(row.msg_id as string) ? { ...row, [k.columns.humanRecipients]: exact.get(row.msg_id as string)! } : row,
  );
}
