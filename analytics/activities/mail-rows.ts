import type { Tenant } from '../../domain/tenancy/context.js';
import { activityWhere, limitClause, type ActivityFilter, type PageWindow } from './filters.js';
import { resultColumns, selectList, type ActivityQuery, type ColumnSql } from './query.js';

/**
 * The query shape of the sent and unopened listings: the newest snapshot of each mail of the
 * `mails` mirror, filtered, newest reception first, ties by mail_id (ULIDs of one send grow like
 * the Postgres ids). Dates apply to the reception (received_at), a range of the mirror's key
 * (instance_id, received_at, mail_id). The plan, and why the page and the export differ:
 * docs/analytics.md, "How the listings are built".
 */

/** The first fields of both rows the mirror serves (spec: Mail, Unopened row), in their order. */
export const MAIL_HEAD: readonly ColumnSql[] = [
  { name: 'mail_id', kind: 'text', sql: 'mail_id' },
  { name: 'msg_id', kind: 'text', sql: 'msg_id' },
  { name: 'to', kind: 'text', sql: 'recipient' },
  { name: 'subject', kind: 'text', sql: 'subject' },
  { name: 'sender', kind: 'text', sql: 'sender', nullable: true },
];

export interface MailRowsListing {
  name: 'sent' | 'unopened' | 'unopened.human';
  /** The row, in the spec's order. */
  columns: readonly ColumnSql[];
  /**
   * Conditions on what changes between a mail's snapshots (status, opens, clicks): judged on the
   * newest snapshot only.
   */
  newest: string[];
  /** Parameters of those conditions. */
  params?: Record<string, unknown>;
}

export function mailRowsQuery(tenant: Tenant, f: ActivityFilter, listing: MailRowsListing, page?: PageWindow): ActivityQuery {
  const where = activityWhere(tenant, f, 'received_at');
  const params = { ...where.params, ...listing.params };
  const select = selectList(listing.columns);
  const newest = listing.newest.join(' AND ');
  // The export: every mail of the range once, merged by FINAL in constant memory.
  // A page: read newest first in key order, keep each mail's newest snapshot, stop when full;
  // `SELECT *` inside on purpose: an explicit list turns the outer ORDER BY into a full sort.
  const sql = page
    ? `SELECT ${select}
    FROM (SELECT * FROM mails WHERE ${where.sql}
          ORDER BY received_at DESC, mail_id DESC, version DESC LIMIT 1 BY received_at, mail_id)
    ${newest ? `WHERE ${newest}` : ''}
    ORDER BY received_at DESC, mail_id DESC${limitClause(page, params)}`
    : `SELECT ${select} FROM mails FINAL WHERE ${where.sql}${newest ? ` AND ${newest}` : ''} ORDER BY received_at DESC, mail_id DESC`;
  return { name: listing.name, columns: resultColumns(listing.columns), params, sql };
}
