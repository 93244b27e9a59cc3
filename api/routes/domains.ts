import { getDomain, getDomainStatus, listDomains } from '../../domain/domains/domains.js';
import type { PageRequest } from '../../domain/pagination.js';
import { defineRoute } from '../route.js';
import { collectionSchema, paginationQuery, resourceId } from '../schemas/common.js';
import { domainSchema, domainStatusSchema } from '../schemas/domains.js';

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
    tag: 'Domains',
    auth: { kind: 'api_key', scope: 'domains:read' },
    params: { id: resourceId },
    success: { status: 200, description: 'The domain with its four DNS check states', schema: domainSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => getDomain(tenant, deps.pool, params.id),
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
