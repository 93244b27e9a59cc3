import { getSender, listSenders, type SenderFilter } from '../../domain/senders/senders.js';
import { defineRoute } from '../http/route.js';
import { collectionSchema, paginationQuery, resourceId } from '../schemas/common.js';
import { senderSchema } from '../schemas/senders.js';

export const senderRoutes = [
  defineRoute<SenderFilter>({
    method: 'get',
    path: '/v1/senders',
    operationId: 'listSenders',
    summary: 'List senders',
    tag: 'Senders',
    auth: { kind: 'api_key', scope: 'senders:read' },
    query: {
      ...paginationQuery,
      name: { type: 'string', maxLength: 255, description: 'Partial, case-insensitive.' },
      email: { type: 'string', maxLength: 320, description: 'Partial, case-insensitive.' },
      is_domain_verified: { type: 'boolean', description: 'true: only senders whose domain has MX, SPF, DKIM and DMARC approved.' },
    },
    success: { status: 200, description: 'A page of senders', schema: collectionSchema(senderSchema) },
    handler: ({ tenant, query, deps }) => listSenders(tenant, deps.pool, query),
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'get',
    path: '/v1/senders/{id}',
    operationId: 'getSender',
    summary: 'Read a sender',
    tag: 'Senders',
    auth: { kind: 'api_key', scope: 'senders:read' },
    params: { id: resourceId },
    success: { status: 200, description: 'The sender', schema: senderSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => getSender(tenant, deps.pool, params.id),
  }),
];
