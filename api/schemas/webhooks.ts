import { webhookEventsSchema } from '../../domain/webhooks/input.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime, nullableDateTime, paginationQuery, withRequired } from './common.js';

// The request bodies' schemas are the domain's, with their types (domain/webhooks/input.ts).
export { webhookCreateSchema, webhookPatchSchema } from '../../domain/webhooks/input.js';
const events = webhookEventsSchema;

/** The Webhook resource of the spec, field for field; the secret is never part of it. */
export const webhookSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  name: { type: 'string' },
  url: { type: 'string', description: 'Endpoint that receives deliveries.' },
  events,
  is_active: { type: 'boolean', description: 'false when paused.' },
  last_success_at: { ...nullableDateTime, description: 'Last delivery answered 2xx.' },
  last_failure_at: { ...nullableDateTime, description: 'Last failed delivery.' },
  last_status_code: { type: ['integer', 'null'], description: 'HTTP code of the last delivery; null if no response (timeout or connection error).' },
  consecutive_failures: { type: 'integer', description: 'Failed deliveries in a row since the last success.' },
  failing_since: { ...nullableDateTime, description: 'First failure of the current streak; null if the last delivery succeeded.' },
  auto_paused_at: { ...nullableDateTime, description: 'When it was paused for persistent failures; null if not auto-paused.' },
  previous_secret_expires_at: { ...nullableDateTime, description: 'Until when the secret before the last rotation still signs; null if none in force.' },
  created_at: dateTime,
  updated_at: { ...dateTime, description: 'Last change of the configuration; a delivery does not change it.' },
});

/** Creation and rotation answers: the webhook plus its signing secret, shown only there. */
export const webhookWithSecretSchema: JsonSchema = withRequired(webhookSchema, {
  secret: { type: 'string', description: 'The signing secret (whsec_<base64>): shown only in this response, not recoverable.' },
});

export const rotateSecretSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    expire_previous: { type: 'boolean', default: false, description: 'true: the previous secret stops signing at once; default: it signs beside the new one for 24 hours.' },
  },
} as const satisfies JsonSchema;

export const testEventSchema: JsonSchema = {
  type: 'object',
  required: ['event_id', 'webhook_id', 'type'],
  properties: {
    event_id: { type: 'integer', description: 'The event; its deliveries carry webhook-id msg_<event_id>.' },
    webhook_id: { type: 'integer' },
    type: { const: 'webhook.test' },
  },
};

export const attemptSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'delivery_id', 'event_id', 'event_type', 'attempt', 'attempted_at', 'status', 'duration_ms', 'status_code', 'error', 'response_body', 'delivery_status'],
  properties: {
    id: { type: 'integer', description: 'The attempt.' },
    delivery_id: { type: 'integer', description: 'The delivery (one event to this webhook) the attempt belongs to; POST .../deliveries/{delivery_id}/retry sends its event again.' },
    event_id: { type: 'string', description: 'The webhook-id header of the event, stable across its attempts.' },
    event_type: { type: 'string' },
    attempt: { type: 'integer', description: '1 for the first attempt of the delivery.' },
    attempted_at: dateTime,
    status: { type: 'string', enum: ['succeeded', 'failed', 'pending'], description: 'succeeded: answered 2xx; failed: any other answer, none, or interrupted; pending: in flight.' },
    duration_ms: { type: ['integer', 'null'] },
    status_code: { type: ['integer', 'null'], description: 'null when there was no answer.' },
    error: { type: ['string', 'null'], description: 'Why there was no answer (timeout, connection error, refused address, interrupted).' },
    response_body: { type: ['string', 'null'], description: 'The first 1 KB of the answer.' },
    delivery_status: { type: 'string', enum: ['pending', 'succeeded', 'failed', 'cancelled'], description: 'Where the delivery stands now.' },
  },
};

export const attemptFilterQuery = {
  ...paginationQuery,
  status: { type: 'string', enum: ['succeeded', 'failed', 'pending'], description: 'Only attempts with this outcome.' },
} as const satisfies Record<string, JsonSchema>;

export const replaySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    since: { ...dateTime, description: 'Events that occurred at or after this time...' },
    until: { ...dateTime, description: '...and before this one (default: now).' },
  },
} as const satisfies JsonSchema;
