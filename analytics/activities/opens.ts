import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { eventActivityQuery, eventColumns, eventCountQuery, OPENS } from './events.js';
import { fetchPage, type EventActivityFilter, type GroupBy, type PageWindow } from './filters.js';
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

/** GET /v1/activities/opens: total_items only with group_by=none (spec), has_more always. */
export function listOpens(tenant: Tenant, ch: ClickHouseClient, f: EventActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  const count = (f.group_by ?? 'none') === 'none' ? eventCountQuery(tenant, OPENS, f) : undefined;
  return fetchPage(ch, (page) => opensQuery(tenant, f, page), f, count);
}
