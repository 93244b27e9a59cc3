import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { eventColumns, eventActivityQuery, OPENS } from './events.js';
import { eventCountSql, eventWhere, fetchPage, type CountQuery, type EventActivityFilter, type GroupBy, type PageWindow } from './filters.js';
import type { ActivityQuery } from './query.js';

/** GET /v1/activities/opens (and its export): open events, three row shapes (spec: Open rows; events.ts). */
export function opensQuery(tenant: Tenant, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  return eventActivityQuery(tenant, OPENS, f, page);
}

/**
 * The CSV columns of the opens export: the spec's table, which is the listing's row without
 * sent_at in group_by=mail_id (JSON exports return the listing's rows as they are).
 */
export function opensCsvColumns(groupBy: GroupBy): string[] {
  return eventColumns(OPENS, groupBy)
    .map((c) => c.name)
    .filter((name) => groupBy !== 'mail_id' || name !== 'sent_at');
}

/** total_items of group_by=none: the events of the listing, counted exactly. */
export function opensCountQuery(tenant: Tenant, f: EventActivityFilter): CountQuery {
  const where = eventWhere(tenant, f, 'open');
  return { name: 'opens.count', sql: eventCountSql(where, f), params: where.params };
}

/** GET /v1/activities/opens: total_items only with group_by=none (spec), has_more always. */
export function listOpens(tenant: Tenant, ch: ClickHouseClient, f: EventActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  const count = (f.group_by ?? 'none') === 'none' ? opensCountQuery(tenant, f) : undefined;
  return fetchPage(ch, (page) => opensQuery(tenant, f, page), f, count);
}
