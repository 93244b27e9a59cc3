import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { MailFilter } from '../../domain/mail/mails.js';
import { activityWhere, fetchPage, latestMails, type PageWindow } from './filters.js';
import { resultColumns, selectList, type ActivityQuery, type ColumnSql } from './query.js';
import { MAIL_HEAD, NO_RECORDED_OPEN } from './unopened.js';

/** GET /v1/mails's filters without paging: the sent listing is the same rows (spec). */
export type SentActivityFilter = Omit<MailFilter, keyof PageRequest>;

/** The Mail row (spec), in its order: GET /v1/mails's fields, from the mirror. */
const COLUMNS: ColumnSql[] = [
  ...MAIL_HEAD,
  { name: 'status', kind: 'number', sql: 'status' },
  { name: 'opens', kind: 'number', sql: 'opens' },
  { name: 'clicks', kind: 'number', sql: 'clicks' },
  { name: 'received_at', kind: 'datetime', sql: 'received_at' },
  { name: 'queued_at', kind: 'datetime', sql: 'queued_at' },
  { name: 'sent_at', kind: 'datetime', sql: 'sent_at' },
  // Always null, as in GET /v1/mails: scheduled sending is unavailable.
  { name: 'schedule_at', kind: 'datetime', sql: "CAST(NULL, 'Nullable(DateTime64(3, \\'UTC\\'))')" },
  { name: 'delay', kind: 'number', sql: 'delay' },
  { name: 'custom_msg_id', kind: 'text', sql: 'custom_msg_id' },
  { name: 'custom_group_code', kind: 'text', sql: 'custom_group_code' },
];

/**
 * GET /v1/activities/sent (and its export): the Mail rows of the `mails` mirror, the same rows and
 * order as GET /v1/mails (domain/mail/mails.ts) without its 3-month window. Status, opens and
 * clicks change between a mail's snapshots, so their filters see the newest snapshot only.
 */
export function sentQuery(tenant: Tenant, f: SentActivityFilter, page?: PageWindow): ActivityQuery {
  const where = activityWhere(tenant, f, 'received_at');
  const params = { ...where.params };
  const after: string[] = [];
  if (f.status !== undefined) {
    after.push('status = {status:UInt8}');
    params.status = f.status;
  }
  if (f.opened === 'opened') after.push('opens > 0');
  if (f.opened === 'unopened') after.push(NO_RECORDED_OPEN);
  return {
    name: 'sent',
    columns: resultColumns(COLUMNS),
    params,
    sql: latestMails({ where: where.sql, after, select: selectList(COLUMNS), page, params }),
  };
}

/** total_items is null, as in GET /v1/mails; paginate with has_more. */
export function listSent(tenant: Tenant, ch: ClickHouseClient, f: SentActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  return fetchPage(ch, (page) => sentQuery(tenant, f, page), f);
}
