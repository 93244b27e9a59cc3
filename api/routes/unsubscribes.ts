import { listUnsubscribes } from '../../domain/unsubscribes/list.js';
import { listRoute } from './reads.js';
import { mailEventFilterQuery } from '../schemas/mail-events.js';
import { unsubscribeSchema } from '../schemas/unsubscribes.js';
import { TAGS } from './tags.js';

export const unsubscribeRoutes = [
  listRoute({
    path: '/v1/mail-unsubscribes',
    operationId: 'listMailUnsubscribes',
    summary: 'List unsubscribe events',
    description:
      'One row per unsubscribed mail, newest first (dates filter unsubscribed_at). The first unsubscribe is kept; reason and comment ' +
      'are completed if they arrive later. Bounded by the retention of the mail: rows leave with it after 3 months. ' +
      'Each unsubscribe also restricted the address (see GET /v1/mail-restrictions). total_items is null.',
    tag: TAGS.restrictions,
    scope: 'mail:read',
    query: mailEventFilterQuery,
    page: { description: 'A page of unsubscribe events, newest first', item: unsubscribeSchema },
    list: listUnsubscribes,
  }),
];
