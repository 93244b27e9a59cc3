import { getSender, listSenders } from '../../domain/senders/senders.js';
import { listRoute, readRoute } from './reads.js';
import { paginationQuery, resourceId } from '../schemas/common.js';
import { senderSchema } from '../schemas/senders.js';
import { TAGS } from './tags.js';

export const senderRoutes = [
  listRoute({
    path: '/v1/senders',
    operationId: 'listSenders',
    summary: 'List senders',
    description:
      'Oldest first. domain_is_verified is recomputed at each read from the domain’s current state, so a sender whose ' +
      'domain has fallen to failed shows false; filter with is_domain_verified=true to list only the senders that can send now. ' +
      'is_consent_required is changed only with the admin CLI.',
    tag: TAGS.senders,
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
    description:
      'The same fields as an item of the listing, domain_is_verified recomputed at this read. 404 sender_not_found when ' +
      'the instance has no sender with this id.',
    tag: TAGS.senders,
    scope: 'senders:read',
    params: { id: resourceId },
    found: { description: 'The sender', schema: senderSchema },
    read: ({ tenant, params, deps }) => getSender(tenant, deps.pool, params.id),
  }),
];
