import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { activityWhere, DATETIME_PARAM, type ActivityFilter, type PageWindow } from './filters.js';
import { fetchPage } from './listing.js';
import { MAIL_HEAD, mailRowsQuery } from './mail-rows.js';
import type { ActivityQuery, ColumnSql } from './query.js';

/**
 * "Delivered with no recorded open", on the newest snapshot of a mail in the `mails` mirror: status
 * 3 (sent; bounced, dropped, deferred, queued and on-hold mails never qualify, and a mail bounced
 * after delivery leaves) and no open counted, nor an open event of the last day in `mail_events`.
 *
 * Why both: the pump inserts a batch's events, then the snapshots of their mails, in one tick
 * (workers/jobs/event-pump.ts); if the second insert fails the tick is retried after a back-off (at
 * most 30 s) and, meanwhile, the event is in ClickHouse but the mirror still says 0 opens. The
 * event check covers that window; it reads one day of the tenant's opens (a small range of the
 * key) rather than every open of the listed range, which would cost more than the listing.
 *
 * Both sides are what ClickHouse holds: an open reaches it through the pump within about a second
 * of the pixel (bench/track: lag < 0.7 s), so for that second a just-opened mail may still be
 * listed. Shared with the sent listing's opened=unopened, so the two agree.
 */
export const NO_RECORDED_OPEN = `status = 3 AND opens = 0 AND mail_id NOT IN (
    SELECT mail_id FROM mail_events
     WHERE instance_id = {instance_id:UInt64} AND event_type = 'open' AND occurred_at >= now64(3) - INTERVAL 1 DAY)`;

/**
 * human=true: delivered with no open a person made, so a mail opened only by a privacy proxy or a
 * scanner is listed (docs/tracking.md). Read from the events: the mirror counts every open. Each
 * open is judged on its newest copy, as exclude_machine judges it. No open precedes its mail's
 * reception, so the opens read start where the listed receptions do (`from`), when the range has
 * a start.
 */
function noHumanOpen(hasFrom: boolean): string {
  return `status = 3 AND mail_id NOT IN (
    SELECT mail_id FROM mail_events
     WHERE instance_id = {instance_id:UInt64} AND event_type = 'open'${hasFrom ? ` AND occurred_at >= {from:${DATETIME_PARAM}}` : ''}
     GROUP BY mail_id, event_id HAVING argMax(machine, shipped_at) = '')`;
}

/** The Unopened row (spec), in its order. */
const COLUMNS: ColumnSql[] = [
  ...MAIL_HEAD,
  { name: 'received_at', kind: 'datetime', sql: 'received_at' },
  { name: 'sent_at', kind: 'datetime', sql: 'sent_at', nullable: true },
  { name: 'custom_msg_id', kind: 'text', sql: 'custom_msg_id', nullable: true },
  { name: 'custom_group_code', kind: 'text', sql: 'custom_group_code', nullable: true },
];

/**
 * GET /v1/activities/unopened (and its export): one row per delivered, unopened mail of the
 * `mails` mirror (mail-rows.ts), newest reception first; dates on the reception date.
 */
export function unopenedQuery(tenant: Tenant, f: UnopenedFilter, page?: PageWindow): ActivityQuery {
  const newest = f.human ? noHumanOpen('from' in activityWhere(tenant, f, 'received_at').params) : NO_RECORDED_OPEN;
  return mailRowsQuery(tenant, f, { name: f.human ? 'unopened.human' : 'unopened', columns: COLUMNS, newest: [newest] }, page);
}

/** The common filters, and whether only people's opens count (human=true). */
export interface UnopenedFilter extends ActivityFilter {
  human?: boolean;
}

/** total_items is always null (spec); paginate with has_more. */
export function listUnopened(tenant: Tenant, ch: ClickHouseClient, f: UnopenedFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  return fetchPage(ch, (page) => unopenedQuery(tenant, f, page), f);
}
