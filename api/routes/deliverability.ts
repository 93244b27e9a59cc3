import { providerDaily, providerFigures } from '../../analytics/deliverability/figures.js';
import { dashboardRange } from '../../domain/panel/dashboard-range.js';
import type { LocalDateFilter } from '../../domain/time/local-date-range.js';
import type { ProviderId } from '../../engines/providers/table.js';
import { defineRoute } from '../http/route.js';
import { deliverabilityQuery, providerDailySchema, providerParam, providersSchema } from '../schemas/deliverability.js';
import { TAGS } from './tags.js';

type Query = LocalDateFilter & { domain?: string };

const RANGE =
  "start_date and end_date are local dates in tz (else the instance's zone, else UTC), inclusive; by default the last 30 days, today " +
  'included; at most 92 days, else 422. Mail figures count the mails received in the range (as GET /v1/activities/sent does), ' +
  'complaints, unsubscribes and opens the events of the range (as their listings do). Each mail counts under the provider it was ' +
  "attributed at acceptance: by its recipient's domain, else by that domain's MX (other until the MX is known; docs/deliverability.md). " +
  'Read from ClickHouse, which lags the events by about a second.';

/** The per-provider figures (issue 40; docs/deliverability.md), read with the activity listings' range rules. */
export const deliverabilityRoutes = [
  defineRoute<Query>({
    method: 'get',
    path: '/v1/deliverability/providers',
    operationId: 'listProviderFigures',
    summary: 'Read sent mail per mailbox provider, against the bulk-sender thresholds',
    description: `One row per mailbox provider: counts, the complaint and hard-bounce rates and their status. ${RANGE}`,
    tag: TAGS.deliverability,
    auth: { kind: 'api_key', scope: 'mail:read' },
    query: deliverabilityQuery,
    success: { status: 200, description: 'The figures per provider', schema: providersSchema },
    handler: async ({ tenant, query, deps }) => {
      const range = dashboardRange(query, tenant.tz);
      const data = await providerFigures(tenant, deps.clickhouse, range, { domain: query.domain });
      return { start_date: range.start_date, end_date: range.end_date, tz: range.tz, domain: query.domain ?? null, data };
    },
  }),
  defineRoute<Query, { provider: ProviderId }>({
    method: 'get',
    path: '/v1/deliverability/providers/{provider}/daily',
    operationId: 'listProviderDailyFigures',
    summary: "Read one mailbox provider's figures per day",
    description: `The figures of GET /v1/deliverability/providers for one provider, per local day of the range, for charts. ${RANGE}`,
    tag: TAGS.deliverability,
    auth: { kind: 'api_key', scope: 'mail:read' },
    params: providerParam,
    query: deliverabilityQuery,
    success: { status: 200, description: "The provider's figures per day", schema: providerDailySchema },
    handler: async ({ tenant, params, query, deps }) => {
      const range = dashboardRange(query, tenant.tz);
      const days = await providerDaily(tenant, deps.clickhouse, params.provider, range, { domain: query.domain });
      return { start_date: range.start_date, end_date: range.end_date, tz: range.tz, domain: query.domain ?? null, provider: params.provider, days };
    },
  }),
];
