import { getDomainStatus, listDomains } from '../../domain/domains/domains.js';
import { getDomainWithRecords } from '../../domain/domains/domain-records.js';
import { dnsSettings } from '../../domain/domains/dns-records.js';
import { resolverLookups } from '../../domain/domains/dns-verify.js';
import { domainCompliance } from '../../domain/domains/compliance/compliance.js';
import { complaintRange } from '../../domain/domains/compliance/complaint-rate.js';
import { DependencyUnavailable } from '../../domain/errors.js';
import { isConnectionFailure } from '../../errors/connection.js';
import { isClickHouseTimeout } from '../../analytics/client.js';
import { providerFigures } from '../../analytics/deliverability/figures.js';
import { listRoute, readRoute } from './reads.js';
import { paginationQuery, resourceId } from '../schemas/common.js';
import { domainComplianceSchema, domainSchema, domainStatusSchema, domainWithRecordsSchema } from '../schemas/domains.js';
import { TAGS } from './tags.js';

const domainName = { domain_name: { type: 'string', minLength: 1, maxLength: 253 } };

/**
 * The domain held against the mailbox providers' sender rules (issue 40; docs/domains.md,
 * Compliance). The panel shows the same answer (api/routes/panel/domains.ts).
 */
export const domainComplianceRoute = readRoute<{ domain_name: string }>({
  path: '/v1/domains/{domain_name}/compliance',
  operationId: 'getDomainCompliance',
  summary: "Check a domain against the mailbox providers' sender rules",
  description:
    'One check per rule Gmail, Yahoo and Outlook.com publish for senders (SPF, DKIM, DMARC, DMARC reports reaching Cartero, ' +
    'one-click unsubscribe, unsubscribes honoured within 2 days, the complaint rate per provider over the last 7 days), each pass, warn, fail or unknown with what was found, the ' +
    'providers it applies to and the page that states it. The DNS records are resolved at the time of the call through ' +
    'DNS_SERVERS; a resolver that does not answer makes the checks that need it unknown. 404 domain_not_found for a domain ' +
    'the instance does not have.',
  tag: TAGS.domains,
  scope: 'domains:read',
  params: domainName,
  found: { description: 'The domain and its checks', schema: domainComplianceSchema },
  read: ({ tenant, params, deps }) =>
    domainCompliance(tenant, deps.pool, params.domain_name, {
      dns: resolverLookups(deps.config.domains.dnsServers, { timeoutMs: 2_000, tries: 1 }),
      settings: dnsSettings(deps.config),
      publicUrl: deps.config.publicUrl,
      // The per-provider figures of GET /v1/deliverability/providers, for the domain, over the last 7 days.
      complaints: (domain) =>
        providerFigures(tenant, deps.clickhouse, complaintRange(tenant), { domain }).catch((err: unknown) => {
          throw isConnectionFailure(err) || isClickHouseTimeout(err) ? new DependencyUnavailable('clickhouse', err) : err;
        }),
    }),
});

export const domainRoutes = [
  listRoute({
    path: '/v1/domains',
    operationId: 'listDomains',
    summary: 'List sending domains',
    description:
      'Oldest first, each with is_verified and its four DNS check states (mx_status, spf_status, dkim_status, dmarc_status). ' +
      'A domain is verified only when all four are approved; the records to publish are on GET /v1/domains/{id}.',
    tag: TAGS.domains,
    scope: 'domains:read',
    query: { ...paginationQuery },
    page: { description: 'A page of domains', item: domainSchema },
    list: listDomains,
  }),
  readRoute<{ id: number }>({
    path: '/v1/domains/{id}',
    operationId: 'getDomain',
    summary: 'Read a domain record',
    description:
      'Beyond the spec\'s fields, the DNS records to publish (DKIM TXT per live key, MX and SPF of the return-path host, a suggested DMARC), each with its current check state.',
    tag: TAGS.domains,
    scope: 'domains:read',
    params: { id: resourceId },
    found: { description: 'The domain with its four DNS check states and its records', schema: domainWithRecordsSchema },
    read: ({ tenant, params, deps }) => getDomainWithRecords(tenant, deps.pool, { id: params.id }, dnsSettings(deps.config)),
  }),
  readRoute<{ domain_name: string }>({
    path: '/v1/domains/{domain_name}/status',
    operationId: 'getDomainStatus',
    summary: 'Read the verification state of a domain',
    description: 'A domain is verified only when its MX, SPF, DKIM and DMARC checks are all approved.',
    tag: TAGS.domains,
    scope: 'domains:read',
    params: domainName,
    found: { description: 'id, domain and is_verified', schema: domainStatusSchema },
    read: ({ tenant, params, deps }) => getDomainStatus(tenant, deps.pool, params.domain_name),
  }),
  domainComplianceRoute,
];
