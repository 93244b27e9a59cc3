import { listUnsubscribes, type UnsubscribeFilter } from '../../domain/unsubscribes/list.js';
import { defineRoute } from '../http/route.js';
import { collectionSchema } from '../schemas/common.js';
import { mailEventFilterQuery } from '../schemas/mail-events.js';
import { unsubscribeSchema } from '../schemas/unsubscribes.js';

export const unsubscribeRoutes = [
  defineRoute<UnsubscribeFilter>({
    method: 'get',
    path: '/v1/mail-unsubscribes',
    operationId: 'listMailUnsubscribes',
    summary: 'List unsubscribe events',
    description:
      'One row per unsubscribed mail, newest first (dates filter unsubscribed_at). The first unsubscribe is kept; reason and comment ' +
      'are completed if they arrive later. Bounded by the retention of the mail: rows leave with it after 3 months. ' +
      'Each unsubscribe also restricted the address (see GET /v1/mail-restrictions). total_items is null.',
    tag: 'Restrictions',
    auth: { kind: 'api_key', scope: 'mail:read' },
    query: mailEventFilterQuery,
    success: { status: 200, description: 'A page of unsubscribe events, newest first', schema: collectionSchema(unsubscribeSchema) },
    handler: ({ tenant, query, deps }) => listUnsubscribes(tenant, deps.pool, query),
  }),
];
