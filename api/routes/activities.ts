import { listClicks } from '../../analytics/activities/clicks.js';
import { listOpens } from '../../analytics/activities/opens.js';
import { listSent } from '../../analytics/activities/sent.js';
import { listUnopened } from '../../analytics/activities/unopened.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { JsonSchema } from '../../domain/validation.js';
import type { ClickHouseClient } from '@clickhouse/client';
import { defineRoute } from '../http/route.js';
import type { RouteNaming } from './reads.js';
import { byGroup, clickRowSchemas, eventActivityQuerySchema, openRowSchemas, unopenedQuerySchema, unopenedRowSchema } from '../schemas/activities.js';
import { collectionSchema } from '../schemas/common.js';
import { mailSchema, sentFilterQuery } from '../schemas/mails.js';
import { TAGS } from './tags.js';

const LAG =
  'Read from ClickHouse, which the event pump feeds from the tracking endpoints within about a second: an open or click ' +
  'answered a moment ago may take that long to appear.';

/**
 * An activity listing: read from ClickHouse under mail:read, a page of rows answered 200, its
 * description ending with LAG.
 */
function activityListing<Q>(route: RouteNaming & {
  description: string;
  query: Record<string, JsonSchema>;
  page: { description: string; item: JsonSchema };
  list: (tenant: Tenant, clickhouse: ClickHouseClient, query: Q) => Promise<unknown>;
}) {
  const { description, page, list, ...shape } = route;
  return defineRoute<Q>({
    method: 'get',
    ...shape,
    description: `${description} ${LAG}`,
    tag: TAGS.activities,
    auth: { kind: 'api_key', scope: 'mail:read' },
    success: { status: 200, description: page.description, schema: collectionSchema(page.item) },
    handler: ({ tenant, query, deps }) => list(tenant, deps.clickhouse, query),
  });
}

/** The activity listings (spec: GET /v1/activities/sent, clicks, opens, unopened). */
export const activityRoutes = [
  activityListing({
    path: '/v1/activities/sent',
    operationId: 'listSentActivity',
    summary: 'List sent mails with delivery and interaction data',
    description:
      'Same query and rows as GET /v1/mails, without its 3-month window filter (availability is governed by retention): newest ' +
      'reception first; dates apply to the reception date. opened=opened: mails with opens; opened=unopened: delivered (status 3) ' +
      'mails without opens. total_items is null; paginate with has_more.',
    query: sentFilterQuery,
    page: { description: 'A page of mails, newest first', item: mailSchema },
    list: listSent,
  }),
  activityListing({
    path: '/v1/activities/opens',
    operationId: 'listOpens',
    summary: 'List opens, per open, per recipient or per message',
    description:
      'Dates apply to the time of the open. Filters apply before grouping, and counts are those of the opens inside the range, ' +
      'so a grouped count equals the sum of its detail rows. Rows by group_by: none, newest open first; mail_id and msg_id, ' +
      'latest open first. total_items is the number of opens with group_by=none and null otherwise; paginate with has_more. ' +
      'exclude_machine=true leaves out opens flagged as machine-made (default: none are excluded).',
    query: eventActivityQuerySchema,
    page: { description: 'A page of open rows, shaped by group_by', item: byGroup(openRowSchemas) },
    list: listOpens,
  }),
  activityListing({
    path: '/v1/activities/clicks',
    operationId: 'listClicks',
    summary: 'List clicks, per click, per recipient or per message',
    description:
      'Dates apply to the time of the click. Filters apply before grouping, and counts are those of the clicks inside the range, ' +
      'so a grouped count equals the sum of its detail rows. Rows by group_by: none, newest click first; mail_id and msg_id, ' +
      'latest click first. total_items: the number of clicks with group_by=none, except with a subject filter (a partial match ' +
      'would have to test every click of the range), when it is null like in the grouped modes; paginate with has_more. ' +
      'exclude_machine=true leaves out clicks flagged as machine-made (default: none are excluded).',
    query: eventActivityQuerySchema,
    page: { description: 'A page of click rows, shaped by group_by', item: byGroup(clickRowSchemas) },
    list: listClicks,
  }),
  activityListing({
    path: '/v1/activities/unopened',
    operationId: 'listUnopened',
    summary: 'List delivered mails with no recorded open',
    description:
      'One row per recipient whose mail was delivered (status 3) and has no recorded open: bounced, dropped, deferred, queued ' +
      'and on-hold mails never appear, and a mail stops appearing once opened. Dates apply to the reception date; newest ' +
      'reception first. total_items is always null; paginate with has_more. human=true: no open a person made, so a mail opened ' +
      'only by machines (privacy proxies, scanners; docs/tracking.md) is listed too.',
    query: unopenedQuerySchema,
    page: { description: 'A page of unopened mails, newest first', item: unopenedRowSchema },
    list: listUnopened,
  }),
];
