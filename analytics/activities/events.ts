import type { Tenant } from '../../domain/tenancy/context.js';
import {
  eventCountSql,
  eventWhere,
  groupedByMail,
  groupedByMessage,
  latestRows,
  machineCondition,
  messageSubject,
  type CountQuery,
  type EventActivityFilter,
  type GroupBy,
  type PageWindow,
} from './filters.js';
import { resultColumns, selectList, type ActivityQuery, type ColumnSql, type ResultColumn } from './query.js';

/**
 * The opens and clicks listings (and their exports) are one query shape over the events (a range
 * read on (instance_id, event_type, [custom_group_code,] occurred_at): filters.ts eventWhere),
 * with dates on the event's time. They differ in the event type, in the words of their column
 * names (opened_at / clicked_at, open_count / click_count...) and in the clicks' link columns.
 * Each row shape (spec: Open rows, Click rows) is written once here as a list of columns with the
 * SQL that computes each, so a listing's result columns, their order and their SQL cannot drift
 * apart. The grouped counts come from the same filtered events as the detail rows, so they equal
 * the sum of the detail rows.
 */
export interface EventKind {
  type: 'open' | 'click';
  /** Names the queries in logs: 'opens.group_by_msg_id'. */
  plural: 'opens' | 'clicks';
  /** The participle of the column names: opened_at, first_clicked_at, recipients_opened. */
  done: 'opened' | 'clicked';
  /** Clicks carry a link: url_redirect per event, links_clicked per group. */
  links: boolean;
}

export const OPENS: EventKind = { type: 'open', plural: 'opens', done: 'opened', links: false };
export const CLICKS: EventKind = { type: 'click', plural: 'clicks', done: 'clicked', links: true };

/**
 * A column's SQL is over the events' columns (none), or an aggregate over `e` (grouped); `lookup`
 * marks the one that is neither: rcpt_count, from the mirror (filters.ts, groupedByMessage).
 */
type Column = ColumnSql & { lookup?: true };

/** The count of a group: its SQL depends on whether copies of an event may remain (filters.ts). */
const COUNT = '{count}';

// Pieces both grouped rows share (the spec names them alike in both).
const custom: Column[] = [
  { name: 'custom_msg_id', kind: 'text', sql: 'any(e.custom_msg_id)' },
  { name: 'custom_group_code', kind: 'text', sql: 'any(e.custom_group_code)' },
];
const eventCount = (k: EventKind): Column => ({ name: `${k.type}_count`, kind: 'number', sql: `toUInt32(${COUNT})` });
const span = (k: EventKind): Column[] => [
  { name: `first_${k.done}_at`, kind: 'datetime', sql: 'min(e.occurred_at)' },
  { name: `last_${k.done}_at`, kind: 'datetime', sql: 'max(e.occurred_at)' },
];

/** group_by=none: one row per event. */
function perEvent(k: EventKind): Column[] {
  return [
    { name: 'mail_id', kind: 'text', sql: 'mail_id' },
    { name: 'msg_id', kind: 'text', sql: 'msg_id' },
    { name: 'to', kind: 'text', sql: 'recipient' },
    { name: 'sender', kind: 'text', sql: "ifNull(sender, '')" },
    ...(k.links ? [{ name: 'url_redirect', kind: 'text', sql: 'url' } as const] : []),
    { name: `${k.done}_at`, kind: 'datetime', sql: 'occurred_at' },
    { name: 'sent_at', kind: 'datetime', sql: 'sent_at' },
    { name: 'custom_msg_id', kind: 'text', sql: 'custom_msg_id' },
    { name: 'custom_group_code', kind: 'text', sql: 'custom_group_code' },
  ];
}

/** group_by=mail_id: one row per recipient. links_clicked: the distinct URLs (NULLs skipped). */
function perMail(k: EventKind): Column[] {
  return [
    { name: 'mail_id', kind: 'text', sql: 'e.mail_id' },
    { name: 'msg_id', kind: 'text', sql: 'any(e.msg_id)' },
    { name: 'to', kind: 'text', sql: 'any(e.recipient)' },
    { name: 'sender', kind: 'text', sql: "ifNull(any(e.sender), '')" },
    eventCount(k),
    ...(k.links ? [{ name: 'links_clicked', kind: 'number', sql: 'toUInt32(uniqExact(e.url))' } as const] : []),
    ...span(k),
    { name: 'sent_at', kind: 'datetime', sql: 'max(e.sent_at)' },
    ...custom,
  ];
}

/**
 * group_by=msg_id: one row per message. links_clicked of a message: distinct links per
 * recipient, summed over recipients, i.e. the distinct (mail, url) pairs (uniqExact skips the
 * pairs whose url is NULL). rcpt_count comes from the mirror (filters.ts, groupedByMessage).
 */
function perMessage(k: EventKind): Column[] {
  return [
    { name: 'msg_id', kind: 'text', sql: 'e.msg_id' },
    { name: 'sender', kind: 'text', sql: "ifNull(any(e.sender), '')" },
    { name: 'subject', kind: 'text', sql: messageSubject },
    eventCount(k),
    { name: `recipients_${k.done}`, kind: 'number', sql: 'toUInt32(uniqExact(e.mail_id))' },
    ...(k.links ? [{ name: 'links_clicked', kind: 'number', sql: 'toUInt32(uniqExact(e.mail_id, e.url))' } as const] : []),
    { name: 'rcpt_count', kind: 'number', sql: 'toUInt32(r.n)', lookup: true },
    ...span(k),
    ...custom,
  ];
}

/** The events' columns the grouped aggregates read. */
function readColumns(k: EventKind, mode: 'mail_id' | 'msg_id'): string {
  const attributes = mode === 'mail_id' ? ['recipient', 'sent_at'] : ['subject'];
  return ['mail_id', 'msg_id', 'sender', ...attributes, ...(k.links ? ['url'] : []), 'occurred_at', 'custom_msg_id', 'custom_group_code'].join(', ');
}

const aggregates = (columns: Column[]) => (count: string) => selectList(columns.map((c) => ({ ...c, sql: c.sql.replace(COUNT, count) })));

/** The result columns of a listing, in the spec's order, and whether each is text (the CSV guard). */
export function eventColumns(k: EventKind, mode: GroupBy): ResultColumn[] {
  return resultColumns(mode === 'none' ? perEvent(k) : mode === 'mail_id' ? perMail(k) : perMessage(k));
}

/**
 * The listing's query (page given) or its export's (whole range), per group_by: detail rows
 * newest first, or groups ordered by their latest event (filters.ts builds the passes).
 * Machine-made events count like any other unless exclude_machine is set.
 */
export function eventActivityQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  const where = eventWhere(tenant, f, k.type);
  const params = { ...where.params };
  const after = machineCondition(f);
  const mode = f.group_by ?? 'none';
  const name = `${k.plural}.group_by_${mode}`;
  const last = `last_${k.done}_at`;

  if (mode === 'none') {
    const columns = perEvent(k);
    return {
      name,
      columns: resultColumns(columns),
      params,
      sql: latestRows({
        table: where.table,
        where: where.sql,
        after,
        keyDesc: 'occurred_at DESC, event_id DESC',
        key: 'occurred_at, event_id',
        version: 'shipped_at',
        select: selectList(columns),
        page,
        params,
      }),
    };
  }

  if (mode === 'mail_id') {
    const columns = perMail(k);
    return {
      name,
      columns: resultColumns(columns),
      params,
      sql: groupedByMail({ where, after, params, page, columns: readColumns(k, mode), aggregates: aggregates(columns), last }),
    };
  }

  const columns = perMessage(k);
  const grouped = columns.filter((c) => !c.lookup);
  return {
    name,
    columns: resultColumns(columns),
    params,
    sql: groupedByMessage({
      where,
      after,
      params,
      page,
      columns: readColumns(k, mode),
      aggregates: aggregates(grouped),
      select: selectList(columns.map((c) => (c.lookup ? c : { ...c, sql: `g.\`${c.name}\`` }))),
      last,
    }),
  };
}

/** total_items of an ungrouped listing: its events, counted exactly (filters.ts eventCountSql). */
export function eventCountQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter): CountQuery {
  const where = eventWhere(tenant, f, k.type);
  return { name: `${k.plural}.count`, sql: eventCountSql(where, f), params: where.params };
}
