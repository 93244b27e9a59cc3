import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { MailFilter } from '../../domain/mail/mails.js';
import type { PageWindow } from './filters.js';
import { fetchPage } from './listing.js';
import { MAIL_HEAD, mailRowsQuery } from './mail-rows.js';
import type { ActivityQuery, ColumnSql } from './query.js';
import { NO_RECORDED_OPEN } from './unopened.js';

/** GET /v1/mails's filters without paging: the sent listing is the same rows (spec). */
export type SentActivityFilter = Omit<MailFilter, keyof PageRequest>;

/**
 * The Mail row (spec), in its order: GET /v1/mails's fields, from the mirror; human_opens and
 * human_clicks are Cartero's (null for a mail opened or clicked before they were counted:
 * analytics/migrations/007_human_counts.ts).
 */
export const SENT_COLUMNS: readonly ColumnSql[] = [
  ...MAIL_HEAD,
  { name: 'status', kind: 'number', sql: 'status' },
  { name: 'opens', kind: 'number', sql: 'opens' },
  { name: 'clicks', kind: 'number', sql: 'clicks' },
  { name: 'human_opens', kind: 'number', sql: 'human_opens', nullable: true, machine: true },
  { name: 'human_clicks', kind: 'number', sql: 'human_clicks', nullable: true, machine: true },
  { name: 'received_at', kind: 'datetime', sql: 'received_at' },
  { name: 'queued_at', kind: 'datetime', sql: 'queued_at', nullable: true },
  { name: 'sent_at', kind: 'datetime', sql: 'sent_at', nullable: true },
  // Always null, as in GET /v1/mails: scheduled sending is unavailable.
  { name: 'schedule_at', kind: 'datetime', sql: "CAST(NULL, 'Nullable(DateTime64(3, \\'UTC\\'))')", nullable: true },
  { name: 'delay', kind: 'number', sql: 'delay', nullable: true },
  { name: 'custom_msg_id', kind: 'text', sql: 'custom_msg_id', nullable: true },
  { name: 'custom_group_code', kind: 'text', sql: 'custom_group_code', nullable: true },
];

/**
 * GET /v1/activities/sent (and its export): the Mail rows of the `mails` mirror (mail-rows.ts),
 * the same rows and order as GET /v1/mails (domain/mail/mails.ts) without its 3-month window.
 */
export function sentQuery(tenant: Tenant, f: SentActivityFilter, page?: PageWindow): ActivityQuery {
  const newest: string[] = [];
  const params: Record<string, unknown> = {};
  if (f.status !== undefined) {
    newest.push('status = {status:UInt8}');
    params.status = f.status;
  }
  if (f.opened === 'opened') newest.push('opens > 0');
  if (f.opened === 'unopened') newest.push(NO_RECORDED_OPEN);
  return mailRowsQuery(tenant, f, { name: 'sent', columns: SENT_COLUMNS, newest, params }, page);
}

/** total_items is null, as in GET /v1/mails; paginate with has_more. */
export function listSent(tenant: Tenant, ch: ClickHouseClient, f: SentActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  return fetchPage(ch, (page) => sentQuery(tenant, f, page), f);
}
