import type { FromSchema } from 'json-schema-to-ts';
import { WEBHOOK_EVENT_TYPES } from './event-types.js';

/**
 * What creating or changing a webhook takes: the JSON Schemas of POST and PATCH /v1/webhooks and
 * the types derived from them, in one place (as domain/mail/send-request.ts is for a send; why
 * here and not in api/schemas/: docs/architecture.md, Types from schemas).
 */

export const webhookEventsSchema = {
  type: ['array', 'null'],
  maxItems: WEBHOOK_EVENT_TYPES.length,
  items: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
  description: 'Event types this webhook receives; null receives all (docs/webhooks.md lists each type and its data).',
} as const;

const name = { type: 'string', minLength: 1, maxLength: 255 } as const;
const url = { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s) URL of a public host.' } as const;

export const webhookCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url'],
  properties: { name, url, events: webhookEventsSchema },
} as const;

export const webhookPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name,
    url,
    events: webhookEventsSchema,
    is_active: { type: 'boolean', description: 'true resumes a paused webhook (clears auto_paused_at); false pauses it.' },
  },
} as const;

export type WebhookInput = FromSchema<typeof webhookCreateSchema>;
export type WebhookPatch = FromSchema<typeof webhookPatchSchema>;
