import { RESTRICTION_REASONS } from '../../domain/restrictions/restrictions.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, nullableDateTime, paginationQuery } from './common.js';

/**
 * Beyond the spec (a response addition): the bounce that caused a hard_bounce or soft_bounce
 * restriction. Shared with the restriction.* webhook events (api/schemas/webhook-events.ts).
 */
export const restrictionBounceFields: Record<string, JsonSchema> = {
  bounce_reason: {
    type: ['string', 'null'],
    description:
      'Beyond the spec: the reason of the bounce that caused the restriction, in the bounce classifier\'s vocabulary ' +
      '(userunknown, hostunknown, mailboxfull, filtered, expired, ...; docs/bounces.md). For soft_bounce, the bounce that crossed the threshold. ' +
      'Null when no bounce caused it (unsubscribe, the panel) or its bounce is not known (restrictions older than this field).',
  },
  bounce_class: {
    type: ['string', 'null'],
    enum: ['hard', 'soft', null],
    description: 'Beyond the spec: hard or soft, as that bounce was judged. Null when bounce_reason is null for lack of a bounce.',
  },
};

/** The Restriction resource of the spec, field for field, and the bounce that caused it. */
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
  ...restrictionBounceFields,
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
