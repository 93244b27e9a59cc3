import { getDomainStatus, listDomains } from '../../domain/domains/domains.js';
import { getDomainWithRecords } from '../../domain/domains/domain-records.js';
import { dnsSettings } from '../../domain/domains/dns-records.js';
import type { PageRequest } from '../../domain/pagination.js';
import { defineRoute } from '../http/route.js';
import { collectionSchema, paginationQuery, resourceId } from '../schemas/common.js';
import { domainSchema, domainStatusSchema, domainWithRecordsSchema } from '../schemas/domains.js';

export const domainRoutes = [
  defineRoute<PageRequest>({
    method: 'get',
    path: '/v1/domains',
    operationId: 'listDomains',
    summary: 'List sending domains',
    tag: 'Domains',
    auth: { kind: 'api_key', scope: 'domains:read' },
    query: { ...paginationQuery },
    success: { status: 200, description: 'A page of domains', schema: collectionSchema(domainSchema) },
    handler: ({ tenant, query, deps }) => listDomains(tenant, deps.pool, query),
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'get',
    path: '/v1/domains/{id}',
    operationId: 'getDomain',
    summary: 'Read a domain record',
    description:
      'Beyond the spec\'s fields, the DNS records to publish (DKIM TXT per live key, MX and SPF of the return-path host, a suggested DMARC), each with its current check state.',
    tag: 'Domains',
    auth: { kind: 'api_key', scope: 'domains:read' },
    params: { id: resourceId },
    success: { status: 200, description: 'The domain with its four DNS check states and its records', schema: domainWithRecordsSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => getDomainWithRecords(tenant, deps.pool, { id: params.id }, dnsSettings(deps.config)),
  }),
  defineRoute<Record<string, never>, { domain_name: string }>({
    method: 'get',
    path: '/v1/domains/{domain_name}/status',
    operationId: 'getDomainStatus',
    summary: 'Read the verification state of a domain',
    description: 'A domain is verified only when its MX, SPF, DKIM and DMARC checks are all approved.',
    tag: 'Domains',
    auth: { kind: 'api_key', scope: 'domains:read' },
    params: { domain_name: { type: 'string', minLength: 1, maxLength: 253 } },
    success: { status: 200, description: 'id, domain and is_verified', schema: domainStatusSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => getDomainStatus(tenant, deps.pool, params.domain_name),
  }),
];
