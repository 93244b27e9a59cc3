import { RESTRICTION_REASONS } from '../../domain/restrictions/restrictions.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, nullableDateTime, paginationQuery } from './common.js';

/** The Restriction resource of the spec, field for field. */
export const restrictionSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  recipient: { type: 'string', description: 'The restricted address, lower-case.' },
  reason: {
    type: ['string', 'null'],
    description:
      'unspecified, unsubscribe, soft_bounce or hard_bounce. Open vocabulary: new values may appear without notice and clients must tolerate them.',
  },
  scope: { type: 'null', description: 'Always null.' },
  restricted_at: { ...nullableDateTime, description: 'When the restriction was applied.' },
  deleted_at: { ...nullableDateTime, description: 'When it was lifted; null while in force.' },
});

export const restrictionFilterQuery = {
  ...paginationQuery,
  recipient: {
    type: 'string',
    maxLength: 320,
    description: 'Partial, case-insensitive: a query for an address may also return addresses that contain it. A + must be sent as %2B.',
  },
  reason: { type: 'string', enum: [...RESTRICTION_REASONS], description: 'Only restrictions with this reason.' },
  active: { type: 'boolean', description: 'true: only in force; false: only lifted; omitted: all.' },
} satisfies Record<string, JsonSchema>;
