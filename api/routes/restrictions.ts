import { listRestrictions } from '../../domain/restrictions/list.js';
import { listRoute } from './reads.js';
import { restrictionFilterQuery, restrictionSchema } from '../schemas/restrictions.js';
import { TAGS } from './tags.js';

export const restrictionRoutes = [
  listRoute({
    path: '/v1/mail-restrictions',
    operationId: 'listMailRestrictions',
    summary: 'List sending restrictions',
    description:
      'Addresses Cartero will not contact again, with their history: read-only (restrictions are created and lifted in the panel, ' +
      'or by unsubscribes and bounces). Ordered by restricted_at descending; not bounded by the retention window. ' +
      'total_items is null.',
    tag: TAGS.restrictions,
    scope: 'mail:read',
    query: restrictionFilterQuery,
    page: { description: 'A page of restrictions, newest first', item: restrictionSchema },
    list: listRestrictions,
  }),
];
