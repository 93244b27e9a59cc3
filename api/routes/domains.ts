import { getDomainStatus, listDomains } from '../../domain/domains/domains.js';
import { getDomainWithRecords } from '../../domain/domains/domain-records.js';
import { dnsSettings } from '../../domain/domains/dns-records.js';
import { listRoute, readRoute } from './reads.js';
import { paginationQuery, resourceId } from '../schemas/common.js';
import { domainSchema, domainStatusSchema, domainWithRecordsSchema } from '../schemas/domains.js';
import { TAGS } from './tags.js';

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
    params: { domain_name: { type: 'string', minLength: 1, maxLength: 253 } },
    found: { description: 'id, domain and is_verified', schema: domainStatusSchema },
    read: ({ tenant, params, deps }) => getDomainStatus(tenant, deps.pool, params.domain_name),
  }),
];
