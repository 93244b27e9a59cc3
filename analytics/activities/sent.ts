import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { MailFilter } from '../../domain/mail/mails.js';
import { activityWhere, fetchPage, latestRows, type PageWindow } from './filters.js';
import type { ActivityQuery } from './query.js';
import { NO_RECORDED_OPEN } from './unopened.js';

/** GET /v1/mails's filters without paging: the sent listing is the same rows (spec). */
export type SentActivityFilter = Omit<MailFilter, keyof PageRequest>;

const COLUMNS = [
  { name: 'mail_id', kind: 'text' },
  { name: 'msg_id', kind: 'text' },
  { name: 'to', kind: 'text' },
  { name: 'subject', kind: 'text' },
  { name: 'sender', kind: 'text' },
  { name: 'status', kind: 'number' },
  { name: 'opens', kind: 'number' },
  { name: 'clicks', kind: 'number' },
  { name: 'received_at', kind: 'datetime' },
  { name: 'queued_at', kind: 'datetime' },
  { name: 'sent_at', kind: 'datetime' },
  { name: 'schedule_at', kind: 'datetime' },
  { name: 'delay', kind: 'number' },
  { name: 'custom_msg_id', kind: 'text' },
  { name: 'custom_group_code', kind: 'text' },
] as const;

/**
 * GET /v1/activities/sent (and its export): the Mail rows of the `mails` mirror, the same rows and
 * order as GET /v1/mails (domain/mail/mails.ts) without its 3-month window: newest reception
 * first, ties by mail_id (ULIDs of one send grow like the Postgres ids). Status, opens and clicks
 * change between a mail's snapshots, so their filters see the newest snapshot only.
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
    columns: COLUMNS,
    params,
    sql: latestRows({
      table: 'mails',
      where: { sql: where.sql, params },
      after,
      keyDesc: 'received_at DESC, mail_id DESC',
      key: 'received_at, mail_id',
      version: 'version',
      select: `mail_id, msg_id, recipient AS \`to\`, subject, sender, status, opens, clicks, received_at, queued_at, sent_at,
               CAST(NULL, 'Nullable(DateTime64(3, \\'UTC\\'))') AS schedule_at, delay, custom_msg_id, custom_group_code`,
      page,
      params,
    }),
  };
}

/** total_items is null, as in GET /v1/mails; paginate with has_more. */
export function listSent(tenant: Tenant, ch: ClickHouseClient, f: SentActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  return fetchPage(ch, (page) => sentQuery(tenant, f, page), f);
}
