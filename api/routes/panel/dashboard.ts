import { dashboard } from '../../../analytics/dashboard.js';
import { dashboardRange } from '../../../domain/panel/dashboard-range.js';
import type { LocalDateFilter } from '../../../domain/time/local-date-range.js';
import { defineRoute } from '../../http/route.js';
import { dashboardQuery, dashboardSchema } from '../../schemas/dashboard.js';
import { TAGS } from '../tags.js';

/**
 * The panel's dashboard (docs/panel.md, "Dashboard"): any member may read it (viewer). Each
 * figure is the count a public listing gives for the same day, so the panel never shows a number
 * the API would contradict.
 */
export const panelDashboardRoutes = [
  defineRoute<LocalDateFilter>({
    method: 'get',
    path: '/v1/private/dashboard',
    operationId: 'getPanelDashboard',
    summary: "Read the instance's activity per day",
    description:
      'For each local day of the range (start_date to end_date inclusive, in tz, else the instance\'s zone, else UTC; by default ' +
      'the last 30 days, today included; at most 92 days, else 422): mails sent, delivered, bounced (hard and soft), complaints, ' +
      'opens and clicks each split into human and machine-made, and restrictions added; with the totals, the top bounce reasons ' +
      'and the restrictions per reason. Each day\'s figure equals the count of the matching public listing asked for that day ' +
      '(GET /v1/activities/sent, opens, clicks, /v1/mail-complaints, /v1/mail-restrictions). Read from ClickHouse (and Postgres ' +
      'for complaints and restrictions, as their listings are), so events answered within the last second may be missing.',
    tag: TAGS.panel,
    auth: { kind: 'session', role: 'viewer' },
    query: dashboardQuery,
    success: { status: 200, description: 'The figures per day, their totals, the top bounce reasons and the restrictions per reason', schema: dashboardSchema },
    handler: ({ tenant, query, deps }) => dashboard(tenant, deps.clickhouse, deps.pool, dashboardRange(query, tenant.tz)),
  }),
];
