import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventRowColumns, eventRowsQuery } from './event-rows.js';
import { eventsByMailQuery, mailGroupColumns } from './events-by-mail.js';
import { eventsByMessageQuery, messageGroupColumns } from './events-by-message.js';
import type { EventActivityFilter, GroupBy, PageWindow } from './filters.js';
import { resultColumns, type ActivityQuery, type ColumnSql, type ResultColumn } from './query.js';

/**
 * The one builder of the opens and clicks listings (and their exports). The two differ only in
 * the event type, the names of some columns and the clicks' link columns: each of opens.ts and
 * clicks.ts holds those in one EventKind (event-kind.ts), and this module picks the query shape
 * by group_by:
 *
 *   none     one row per event                 event-rows.ts
 *   mail_id  one row per recipient (mail)      events-by-mail.ts
 *   msg_id   one row per message               events-by-message.ts
 *
 * Dates apply to the event's time. The grouped counts come from the same filtered events as the
 * detail rows, so a group's count equals the sum of its detail rows. How each shape is read and
 * why: docs/analytics.md, "How the listings are built".
 */

/** Each shape's builder, by group_by. */
const SHAPES: Record<GroupBy, (tenant: Tenant, k: EventKind, f: EventActivityFilter, page?: PageWindow) => ActivityQuery> = {
  none: eventRowsQuery,
  mail_id: eventsByMailQuery,
  msg_id: eventsByMessageQuery,
};

const ROWS: Record<GroupBy, (k: EventKind) => ColumnSql[]> = {
  none: eventRowColumns,
  mail_id: (k) => mailGroupColumns(k, false),
  msg_id: (k) => messageGroupColumns(k),
};

/**
 * The listing's query (page given) or its export's (whole range), per group_by. Machine-made
 * events count like any other unless exclude_machine is set.
 */
export function eventActivityQuery(tenant: Tenant, k: EventKind, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  return SHAPES[f.group_by ?? 'none'](tenant, k, f, page);
}

/** The result columns of a listing, in the spec's order, and whether each is text (the CSV guard). */
export function eventColumns(k: EventKind, mode: GroupBy): ResultColumn[] {
  return resultColumns(ROWS[mode](k));
}
