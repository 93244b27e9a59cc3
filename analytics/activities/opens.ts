import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { EventKind } from './event-kind.js';
import { eventCountQuery } from './event-rows.js';
import { eventActivityQuery, eventColumns } from './events.js';
import type { EventActivityFilter, GroupBy, PageWindow } from './filters.js';
import { fetchPage } from './listing.js';
import type { ActivityQuery } from './query.js';

/** Open events, and the spec's names of their columns (spec: Open rows). */
export const OPENS: EventKind = {
  type: 'open',
  queries: { none: 'opens.group_by_none', mail_id: 'opens.group_by_mail_id', msg_id: 'opens.group_by_msg_id', count: 'opens.count' },
  columns: { at: 'opened_at', count: 'open_count', first: 'first_opened_at', last: 'last_opened_at', recipients: 'recipients_opened', humanCount: 'human_open_count', humanRecipients: 'recipients_opened_human' },
  links: false,
};

/** GET /v1/activities/opens (and its export): three row shapes by group_by (events.ts). */
export function opensQuery(tenant: Tenant, f: EventActivityFilter, page?: PageWindow): ActivityQuery {
  return eventActivityQuery(tenant, OPENS, f, page);
}

/**
 * The CSV columns of the opens export: the spec's table, which is the listing's row without
 * sent_at in group_by=mail_id (JSON exports return the listing's rows as they are).
 */
export function opensCsvColumns(groupBy: GroupBy): string[] {
  return eventColumns(OPENS, groupBy)
    .filter((c) => !c.machine)
    .map((c) => c.name)
    .filter((name) => groupBy !== 'mail_id' || name !== 'sent_at');
}

/** GET /v1/activities/opens: total_items only with group_by=none (spec), has_more always. */
export function listOpens(tenant: Tenant, ch: ClickHouseClient, f: EventActivityFilter & PageRequest): Promise<Page<Record<string, unknown>>> {
  const count = (f.group_by ?? 'none') === 'none' ? eventCountQuery(tenant, OPENS, f) : undefined;
  return fetchPage(ch, (page) => opensQuery(tenant, f, page), f, count);
}
