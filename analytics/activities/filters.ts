import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import { toPage, window } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { toUtcRange } from '../../domain/time/local-date-range.js';
import type { ActivityFilter } from '../../domain/mail/mails.js';
import type { ActivityQuery } from './query.js';
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
 * query cheapest, which is not always the outermost SELECT (see groupedByMessage).
 */
export interface PageWindow {
  limit: number;
  offset: number;
}

/**
 * ClickHouse settings every activity query runs with, listing or export: date-times as ISO 8601
 * UTC (2026-11-22T10:00:00.000Z, the API's format) and 64-bit integers as JSON numbers.
 */
export const ACTIVITY_SETTINGS = {
  date_time_output_format: 'iso',
  output_format_json_quote_64bit_integers: 0,
} as const;

/**
 * Settings of a listing's page query (not of counts or exports). Reading in key order with an early
 * stop (LIMIT 1 BY, LIMIT), ClickHouse 26.7 otherwise buffers blocks from every part before the
 * stop takes effect: the opens none page read 857,364 rows for 101 (656 ms), 109,627 with these
 * settings (119 ms); the grouped listings' first pass 2,187,448 -> 117,547 (docs/performance-history.md).
 */
export const PAGE_SETTINGS = {
  read_in_order_use_buffering: 0,
  max_block_size: '8192',
} as const;

export const DATETIME_PARAM = `DateTime64(3, 'UTC')`;

export interface Where {
  /** Conditions joined with AND; always starts with the tenant. */
  sql: string;
  params: Record<string, unknown>;
}

/**
 * The common filters as one WHERE clause and its parameters, for the events (`mail_events` and
 * its sorted copies; time column occurred_at, the event's time) or the `mails` mirror
 * (received_at): the tables name the mail's attributes alike. Only the shape of the clause depends on which filters are present; every
 * value is a `{name:Type}` parameter. Dates are the spec's local dates in tz (else the instance's
 * zone, else UTC), converted once by toUtcRange (422 for a bad zone or date).
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
 * The common filters over one event type, as a range read in the key order (tenant, type, [code,]
 * time) of the table that serves them: with a custom_group_code filter the campaign-sorted copy
 * mail_events_by_group (analytics/migrations/005), which holds that campaign's events
 * contiguous, else mail_events. Both hold the same open and click rows with a code, copies
 * included, so every query reads the same events from either.
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

/**
 * The newest version of each row of a ReplacingMergeTree, newest-first in key order, filtered.
 * Both tables can hold a row more than once until merges catch up (a re-shipped event batch, a
 * mail's successive snapshots), and conditions on columns that change between versions
 * (`machine`, a mail's status and counts) must see the newest version only.
 *
 * - Whole range (an export): FINAL, which streams in constant memory.
 * - A page: FINAL cannot read in key order, so it would merge the whole range to return 21 rows;
 *   instead read in key order without FINAL, keep the first (newest `version`) row of each key
 *   with LIMIT 1 BY, filter, and stop once the page is full. Both forms return the same rows.
 */
export function latestRows(o: {
  table: string;
  /** The filters' conditions (Where.sql). */
  where: string;
  /** Conditions on columns that change between versions, applied to the newest version only. */
  after: string[];
  /** The sorting key (without tenant and fixed prefix), descending: 'occurred_at DESC, event_id DESC'. */
  keyDesc: string;
  /** The same key columns, for LIMIT 1 BY. */
  key: string;
  version: string;
  select: string;
  page?: PageWindow;
  params: Record<string, unknown>;
}): string {
  const after = o.after.length ? o.after.join(' AND ') : '';
  if (!o.page) {
    return `SELECT ${o.select} FROM ${o.table} FINAL WHERE ${o.where}${after ? ` AND ${after}` : ''} ORDER BY ${o.keyDesc}`;
  }
  // `SELECT *` inside, on purpose: ClickHouse still reads only the columns used above, and with an
  // explicit list (26.7) the outer ORDER BY loses the "already sorted" property and becomes a
  // full sort, which reads the whole range instead of stopping at the page.
  return `SELECT ${o.select}
    FROM (SELECT * FROM ${o.table} WHERE ${o.where}
          ORDER BY ${o.keyDesc}, ${o.version} DESC LIMIT 1 BY ${o.key})
    ${after ? `WHERE ${after}` : ''}
    ORDER BY ${o.keyDesc}${limitClause(o.page, o.params)}`;
}

/**
 * The newest snapshot of each mail of the `mails` mirror (the sent and unopened listings): newest
 * reception first, ties by mail_id (ULIDs of one send grow like the Postgres ids).
 */
export function latestMails(o: { where: string; after: string[]; select: string; page?: PageWindow; params: Record<string, unknown> }): string {
  return latestRows({ ...o, table: 'mails', keyDesc: 'received_at DESC, mail_id DESC', key: 'received_at, mail_id', version: 'version' });
}

// ---- Pieces of the grouped opens and clicks listings (events.ts).

/** Conditions on the newest version of an event (a re-shipped event may carry a new flag). */
export function machineCondition(f: EventActivityFilter): string[] {
  return f.exclude_machine ? ["machine = ''"] : [];
}

/**
 * The grouped listings (group_by mail_id or msg_id).
 *
 * Exports aggregate every group of the range in one pass over the deduplicated events (FINAL).
 *
 * A page does not need every group: its groups are ordered by their latest event, so they are
 * the first distinct keys met when reading the events newest first, which is the table's key
 * order read backwards. The first pass reads that way, keeps the first row of each key and stops
 * after the page's keys: for the first pages it reads a small part of the range. The second pass
 * aggregates the events of those keys only: for mail_id a key filter on the events' table
 * (eventWhere), helped by its mail_id bloom filter index; for msg_id the messages' key ranges in
 * mail_events_by_msg. Both passes see the same events, so the order of the keys and the rows
 * agree.
 *
 * Copies of an event (a re-shipped batch) are the same event: same event_id, same values, except
 * the `machine` flag, which a re-shipment may change (the newest copy wins), and sent_at, read
 * from the mail at each shipment: it only moves forward, and the groups take its max. So without
 * conditions on the newest copy (`after`, i.e. exclude_machine) a page reads the events as they
 * are: copies change neither a key's first row nor min/max/any/uniqExact, and the count counts
 * distinct event_ids. Merging copies first (LIMIT 1 BY, or FINAL) cost more than that: opens by
 * msg_id with a campaign filter, first pass 47 -> 36 ms, second 67 -> 45 ms (docs/performance-history.md).
 * With `after`, both passes judge each event on its newest copy, then count rows.
 *
 * The events reach the aggregation as a subquery `e`: the grouping SELECT has no WHERE of its
 * own, so its output aliases (msg_id, sender...) never shadow the filters' columns.
 *
 * `SELECT *` in the nested subqueries, on purpose: ClickHouse reads only the columns used in the
 * end, and with an explicit list (26.7) an outer ORDER BY loses the "already sorted" property of
 * its input and becomes a full sort, which reads the whole range instead of stopping early.
 */
function newestEvents(table: string, where: string, after: string[], order: string, key: string): string {
  const deduped = `SELECT * FROM ${table} WHERE ${where} ORDER BY ${order}, shipped_at DESC LIMIT 1 BY ${key}`;
  return after.length ? `SELECT * FROM (${deduped}) WHERE ${after.join(' AND ')}` : deduped;
}

/**
 * The first pass as one scalar `page`: `page.1` the page's keys and, with `reception` (mail_id
 * keys), `page.2` the earliest reception time of those mails. An event never precedes its mail's
 * reception, so every event of the page's mails has `occurred_at >= page.2`: the mail_id second
 * pass, which reads the events in time order, reads from there on instead of the whole range
 * (6.7 M rows read -> 535 k). The msg_id pass reads each message's key range in
 * mail_events_by_msg, which a time bound does not narrow (and a message's mails unseen by the
 * first pass could have been received earlier than those seen). For an empty page, min() of
 * nothing is the epoch: no bound, and no key either.
 */
function pageScalar(
  key: 'mail_id' | 'msg_id',
  where: EventWhere,
  after: string[],
  page: PageWindow,
  params: Record<string, unknown>,
  reception: boolean,
): string {
  const events = after.length
    ? `(${newestEvents(where.table, where.sql, after, `occurred_at DESC, ${key} DESC, event_id DESC`, `occurred_at, ${key}, event_id`)})`
    : `${where.table} WHERE ${where.sql}`;
  const keys = `SELECT ${key}${reception ? ', mail_received_at' : ''}
      FROM (SELECT * FROM ${events} ORDER BY occurred_at DESC, ${key} DESC LIMIT 1 BY ${key})
      ORDER BY occurred_at DESC, ${key} DESC${limitClause(page, params)}`;
  const value = reception ? `(groupArray(${key}), min(mail_received_at))` : `tuple(groupArray(${key}))`;
  return `WITH (SELECT ${value} FROM (${keys})) AS page
    `;
}

const pageKeys = (key: 'mail_id' | 'msg_id') => `${key} IN (SELECT arrayJoin(page.1))`;

/**
 * The events `e` to aggregate, and the count of a group over them. Whole range (an export):
 * FINAL, each event once. A page (`keyFilter`): the events of its keys, copies included unless
 * `after` needs each event's newest copy, then merged by `merge` (see above).
 */
function groupEvents(q: GroupedQuery, table: string, keyFilter?: string, merge?: 'final' | 'sort'): { events: string; count: string } {
  const where = [q.where.sql, ...(keyFilter ? [keyFilter] : [])].join(' AND ');
  if (keyFilter && !q.after.length) {
    return { events: `(SELECT event_id, ${q.columns} FROM ${table} WHERE ${where}) AS e`, count: 'uniqExact(e.event_id)' };
  }
  if (keyFilter && merge === 'sort') {
    return { events: `(${newestEvents(table, where, q.after, 'occurred_at DESC, event_id DESC', 'occurred_at, event_id')}) AS e`, count: 'count()' };
  }
  return { events: `(SELECT ${q.columns} FROM ${table} FINAL WHERE ${[where, ...q.after].join(' AND ')}) AS e`, count: 'count()' };
}

export interface GroupedQuery {
  where: EventWhere;
  /** Conditions on the newest copy of an event (machineCondition). */
  after: string[];
  /** Columns of the events the aggregates read. */
  columns: string;
  /** The SELECT list over `e`, grouped by the key, given the SQL of a group's event count. */
  aggregates: (count: string) => string;
  /** Alias of max(e.occurred_at) in `aggregates`: the listing's order. */
  last: string;
  page?: PageWindow;
  params: Record<string, unknown>;
}

/**
 * group_by=mail_id: one row per recipient, latest event first. The page's events are spread over
 * the range in time order: with `after`, read newest first and deduplicated by sorting (FINAL
 * would merge every part of the range).
 */
export function groupedByMail(q: GroupedQuery): string {
  const head = q.page ? pageScalar('mail_id', q.where, q.after, q.page, q.params, true) : '';
  const { events, count } = q.page
    ? groupEvents(q, q.where.table, `${pageKeys('mail_id')} AND occurred_at >= page.2`, 'sort')
    : groupEvents(q, q.where.table);
  return `${head}SELECT ${q.aggregates(count)}
    FROM ${events}
    GROUP BY e.mail_id
    ORDER BY ${q.last} DESC, mail_id DESC`;
}

/**
 * group_by=msg_id: one row per message, latest event first, with rcpt_count: the recipients of
 * the message in the `mails` mirror, whatever their status (uniqExact(mail_id) rather than FINAL:
 * the mirror holds one row per snapshot of a mail). The page's msg_ids are a scalar, computed
 * once and read by both the second pass and the lookup. The second pass reads the page's
 * messages from mail_events_by_msg, where each message's events are contiguous (from
 * mail_events, with a campaign filter, it read 1.8 M rows for 70 k); with `after`, with FINAL:
 * over those short key ranges merging is cheaper than sorting the rows to keep each event's
 * newest copy (45 against 84 ms for a campaign's page; docs/performance-history.md). The lookup reads the
 * tenant's key prefix of the mirror through its msg_id bloom filter index. It is not bounded by
 * the page's reception times: that would undercount a message whose recipients were not all
 * received at once (the service never does that, but the cost of the bound's saving, ~5 ms, is a
 * wrong total if it ever did). `select` is the final SELECT list over `g` (the aggregates) and
 * `r.n` (rcpt_count).
 */
export function groupedByMessage(q: GroupedQuery & { select: string }): string {
  const { events, count } = q.page ? groupEvents(q, 'mail_events_by_msg', pageKeys('msg_id'), 'final') : groupEvents(q, q.where.table);
  const ids = q.page
    ? `(SELECT arrayJoin(page.1))`
    : `(SELECT msg_id FROM ${q.where.table} WHERE ${q.where.sql})`; // a superset is harmless: only listed messages are joined
  return `${q.page ? pageScalar('msg_id', q.where, q.after, q.page, q.params, false) : ''}SELECT ${q.select}
    FROM (SELECT ${q.aggregates(count)} FROM ${events} GROUP BY e.msg_id) AS g
    LEFT JOIN (SELECT msg_id, uniqExact(mail_id) AS n FROM mails
               WHERE instance_id = {instance_id:UInt64} AND msg_id IN ${ids}
               GROUP BY msg_id) AS r ON r.msg_id = g.msg_id
    ORDER BY ${q.last} DESC, msg_id DESC`;
}

/**
 * A message's subject, or null when its recipients' subjects differ (merge tags render a subject
 * per recipient).
 */
export const messageSubject = 'if(min(e.subject) = max(e.subject), min(e.subject), NULL)';

/** A count for total_items: one number, `{name:Type}` parameters like its listing. */
export interface CountQuery {
  name: string;
  sql: string;
  params: Record<string, unknown>;
}

/**
 * total_items of an ungrouped opens or clicks listing: its events counted exactly, each once,
 * without FINAL. `count() FINAL` merged every row of the range across the overlapping parts
 * (0.9-2.4 s at 7 M opens). Every copy of an event (a re-shipped batch, a re-flagged click) has
 * the same event_id, unique within the tenant and event type of `where`, so the distinct
 * event_ids are the events. With exclude_machine the flag is judged on the newest copy, as in the
 * listing: one row per event_id with its newest flag, then the count of the unflagged ones.
 */
export function eventCountSql(where: EventWhere, f: EventActivityFilter): string {
  if (!f.exclude_machine) return `SELECT uniqExact(event_id) AS n FROM ${where.table} WHERE ${where.sql}`;
  return `SELECT count() AS n FROM (SELECT argMax(machine, shipped_at) AS newest_machine FROM ${where.table}
    WHERE ${where.sql} GROUP BY event_id) WHERE newest_machine = ''`;
}

/**
 * Run a listing: its query with the page window of `req` (one row more than the page, so has_more
 * is exact without a count) and, where the listing has one, its count alongside.
 */
export async function fetchPage<T>(
  ch: ClickHouseClient,
  build: (page: PageWindow) => ActivityQuery,
  req: PageRequest,
  count?: CountQuery,
): Promise<Page<T>> {
  const q = build(window(req));
  const [rows, total] = await Promise.all([
    ch
      .query({ query: q.sql, query_params: q.params, format: 'JSONEachRow', clickhouse_settings: { ...ACTIVITY_SETTINGS, ...PAGE_SETTINGS, log_comment: q.name } })
      .then((rs) => rs.json<T>()),
    count
      ? ch
          .query({ query: count.sql, query_params: count.params, format: 'JSONEachRow', clickhouse_settings: { ...ACTIVITY_SETTINGS, log_comment: count.name } })
          .then((rs) => rs.json<{ n: number }>())
          .then((r) => Number(r[0]?.n ?? 0))
      : Promise.resolve(null),
  ]);
  return toPage(rows, req, total);
}
