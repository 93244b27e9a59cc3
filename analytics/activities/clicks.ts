import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { CLICKS, eventActivityQuery, eventCountQuery } from './events.js';
import { fetchPage, type EventActivityFilter, type PageWindow } from './filters.js';
import type { ActivityQuery } from './query.js';

/**
 * GET /v1/activities/clicks (and its export): click events, three row shapes (spec: Click rows;
 * events.ts). A link is the clicked URL; clicks without a URL count as clicks but not as links.
 */
export function clicksQuery(tenant: Tenant, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  return eventActivityQuery(tenant, CLICKS, f, page);
}

/**
 * Whether the clicks listing counts total_items: with group_by=none (the spec: always null when
 * grouped), unless a subject filter is given. The page reads events newest-first and stops once
 * it is full; a count must test every event of the range, and a partial subject match is the one
 * filter that then reads and scans every subject string of the range (the others compare short
 * keys, or are narrowed by the msg_id/mail_id skip indexes).
 */
export function clicksCounted(f: EventActivityFilter): boolean {
  return (f.group_by ?? 'none') === 'none' && f.subject === undefined;
}

/** GET /v1/activities/clicks: total_items per clicksCounted, has_more always. */
export function listClicks(tenant: Tenant, ch: ClickHouseClient, f: EventActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  return fetchPage(ch, (page) => clicksQuery(tenant, f, page), f, clicksCounted(f) ? eventCountQuery(tenant, CLICKS, f) : undefined);
}
