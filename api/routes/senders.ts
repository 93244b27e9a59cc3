import { getSender, listSenders } from '../../domain/senders/senders.js';
import { listRoute, readRoute } from './reads.js';
import { paginationQuery, resourceId } from '../schemas/common.js';
import { senderSchema } from '../schemas/senders.js';

export const senderRoutes = [
  listRoute({
    path: '/v1/senders',
    operationId: 'listSenders',
    summary: 'List senders',
    tag: 'Senders',
    scope: 'senders:read',
    query: {
      ...paginationQuery,
      name: { type: 'string', maxLength: 255, description: 'Partial, case-insensitive.' },
      email: { type: 'string', maxLength: 320, description: 'Partial, case-insensitive.' },
      is_domain_verified: { type: 'boolean', description: 'true: only senders whose domain has MX, SPF, DKIM and DMARC approved.' },
    },
    page: { description: 'A page of senders', item: senderSchema },
    list: listSenders,
  }),
  readRoute<{ id: number }>({
    path: '/v1/senders/{id}',
    operationId: 'getSender',
    summary: 'Read a sender',
    tag: 'Senders',
    scope: 'senders:read',
    params: { id: resourceId },
    found: { description: 'The sender', schema: senderSchema },
    read: ({ tenant, params, deps }) => getSender(tenant, deps.pool, params.id),
  }),
];
