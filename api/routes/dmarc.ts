import { listDmarcReports } from '../../analytics/dmarc/reports.js';
import { listDmarcSources } from '../../analytics/dmarc/sources.js';
import { getDomainStatus } from '../../domain/domains/domains.js';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { ClickHouseClient } from '../../analytics/client.js';
import type { LocalDateFilter } from '../../domain/time/local-date-range.js';
import { defineRoute } from '../http/route.js';
import { collectionSchema } from '../schemas/common.js';
import { dmarcListingQuery, dmarcReportSchema, dmarcSourceSchema } from '../schemas/dmarc.js';
import { TAGS } from './tags.js';

type Query = LocalDateFilter & PageRequest;
type Params = { domain_name: string };

const DATES =
  'start_date and end_date (local dates in tz, else the instance\'s zone, else UTC) apply to the beginning of the reported period. ' +
  'Read from ClickHouse, which the worker\'s DMARC shipper feeds from the reports received: a report received a moment ago may take ' +
  'that long to appear. A domain of another instance, or none, is 404 domain_not_found.';

const domainName = { domain_name: { type: 'string', minLength: 1, maxLength: 253 } };

/**
 * The DMARC aggregate reports mailbox providers sent about a domain (issue 39; docs/dmarc.md,
 * Reading the reports): the domain is found among the key's tenant's (404 otherwise), then its
 * reports are read from ClickHouse (analytics/dmarc/).
 */
/** One listing of a domain's reports: the domain found among the tenant's (404 otherwise), then read from ClickHouse. */
function dmarcListing<Item>(route: {
  path: string;
  operationId: string;
  summary: string;
  description: string;
  success: { description: string; schema: Parameters<typeof collectionSchema>[0] };
  list: (tenant: Tenant, ch: ClickHouseClient, domain: string, q: Query) => Promise<Page<Item>>;
}) {
  return defineRoute<Query, Params>({
    method: 'get',
    path: route.path,
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description} ${DATES}`,
    tag: TAGS.domains,
    auth: { kind: 'api_key', scope: 'domains:read' },
    params: domainName,
    query: dmarcListingQuery,
    success: { status: 200, description: route.success.description, schema: collectionSchema(route.success.schema) },
    errors: [404],
    handler: async ({ tenant, params, query, deps }) => {
      const domain = await getDomainStatus(tenant, deps.pool, params.domain_name);
      return route.list(tenant, deps.clickhouse, domain.domain, query);
    },
  });
}

export const dmarcRoutes = [
  dmarcListing({
    path: '/v1/domains/{domain_name}/dmarc-reports',
    operationId: 'listDmarcReports',
    summary: 'List the DMARC aggregate reports received for a domain',
    description:
      'One item per report (a report resent, or sent in both formats, is one), newest period first. message_count is the sum of the ' +
      "records' counts, dmarc_pass_count the messages whose policy_evaluated has DKIM or SPF pass, dmarc_fail_count the rest. " +
      'total_items is the number of reports in the range.',
    success: { description: 'A page of reports, newest first', schema: dmarcReportSchema },
    list: listDmarcReports,
  }),
  dmarcListing({
    path: '/v1/domains/{domain_name}/dmarc-sources',
    operationId: 'listDmarcSources',
    summary: 'List the addresses that sent mail as a domain, per the DMARC reports',
    description:
      'One item per source IP over the reports of the range, busiest first (ties by source_ip as text): how many messages, how many ' +
      'passed DMARC, DKIM and SPF aligned, what receivers did with them, and cartero_signed_count, those signed by one of the ' +
      "domain's Cartero DKIM selectors: Cartero's mail, apart from anyone else sending as the domain. header_from is the From " +
      "domain of most of the address's messages; reporters the organizations that reported it. total_items is the number of addresses.",
    success: { description: 'A page of source addresses, busiest first', schema: dmarcSourceSchema },
    list: listDmarcSources,
  }),
];
