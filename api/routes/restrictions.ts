import { listRestrictions, type RestrictionFilter } from '../../domain/restrictions/list.js';
import { defineRoute } from '../http/route.js';
import { collectionSchema } from '../schemas/common.js';
import { restrictionFilterQuery, restrictionSchema } from '../schemas/restrictions.js';

export const restrictionRoutes = [
  defineRoute<RestrictionFilter>({
    method: 'get',
    path: '/v1/mail-restrictions',
    operationId: 'listMailRestrictions',
    summary: 'List sending restrictions',
    description:
      'Addresses Cartero will not contact again, with their history: read-only (restrictions are created and lifted in the panel, ' +
      'or by unsubscribes and bounces). Ordered by restricted_at descending; not bounded by the retention window. ' +
      'total_items is null.',
    tag: 'Restrictions',
    auth: { kind: 'api_key', scope: 'mail:read' },
    query: restrictionFilterQuery,
    success: { status: 200, description: 'A page of restrictions, newest first', schema: collectionSchema(restrictionSchema) },
    handler: ({ tenant, query, deps }) => listRestrictions(tenant, deps.pool, query),
  }),
];
