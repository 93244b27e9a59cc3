import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventCountQuery } from './event-rows.js';
import { eventActivityQuery } from './events.js';
import type { EventActivityFilter, PageWindow } from './filters.js';
import { fetchPage } from './listing.js';
import type { ActivityQuery } from './query.js';

/**
 * Click events, and the spec's names of their columns (spec: Click rows). A link is the clicked
 * URL; clicks without a URL count as clicks but not as links.
 */
export const CLICKS: EventKind = {
  type: 'click',
  queries: { none: 'clicks.group_by_none', mail_id: 'clicks.group_by_mail_id', msg_id: 'clicks.group_by_msg_id', count: 'clicks.count' },
  columns: { at: 'clicked_at', count: 'click_count', first: 'first_clicked_at', last: 'last_clicked_at', recipients: 'recipients_clicked', humanCount: 'human_click_count', humanRecipients: 'recipients_clicked_human' },
  links: true,
};

/** GET /v1/activities/clicks (and its export): three row shapes by group_by (events.ts). */
export function clicksQuery(tenant: Tenant, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  return eventActivityQuery(tenant, CLICKS, f, page);
}

/**
 * Whether the clicks listing counts total_items: with group_by=none (the spec: always null when
 * grouped), unless a subject filter is given: a partial subject match is the one filter that
 * makes the count read and search every subject string of the range (docs/analytics.md).
 */
export function clicksCounted(f: EventActivityFilter): boolean {
  return (f.group_by ?? 'none') === 'none' && f.subject === undefined;
}

/** GET /v1/activities/clicks: total_items per clicksCounted, has_more always. */
export function listClicks(tenant: Tenant, ch: ClickHouseClient, f: EventActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  return fetchPage(ch, (page) => clicksQuery(tenant, f, page), f, clicksCounted(f) ? eventCountQuery(tenant, CLICKS, f) : undefined);
}
