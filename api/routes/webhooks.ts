import { listAttempts, replay, retryDelivery } from '../../domain/webhooks/deliveries.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateSecret,
  sendTestEvent,
  updateWebhook,
} from '../../domain/webhooks/webhooks.js';
import { receiverPolicy } from '../../domain/webhooks/receiver-address.js';
import { defineRoute } from '../http/route.js';
import { listRoute, readRoute } from './reads.js';
import { collectionSchema, paginationQuery, resourceId } from '../schemas/common.js';
import {
  attemptFilterQuery,
  attemptSchema,
  replaySchema,
  rotateSecretSchema,
  testEventSchema,
  webhookCreateSchema,
  webhookPatchSchema,
  webhookSchema,
  webhookWithSecretSchema,
} from '../schemas/webhooks.js';
import { TAGS } from './tags.js';

const byId = { id: resourceId };
const tag = TAGS.webhooks;
const read = { kind: 'api_key', scope: 'webhooks:read' } as const;
const write = { kind: 'api_key', scope: 'webhooks:write' } as const;

export const webhookRoutes = [
  listRoute({
    path: '/v1/webhooks',
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    description: 'In creation order. The signing secret is never included.',
    tag,
    scope: read.scope,
    query: paginationQuery,
    page: { description: 'A page of webhooks', item: webhookSchema },
    list: listWebhooks,
  }),
  readRoute<{ id: number }>({
    path: '/v1/webhooks/{id}',
    operationId: 'getWebhook',
    summary: 'Read a webhook',
    description:
      'Its configuration and delivery health: last success and failure, last status code, consecutive failures, ' +
      'failing_since and auto_paused_at when persistent failures paused it. The signing secret is never included: it ' +
      'is shown only on creation and rotation. 404 webhook_not_found.',
    tag,
    scope: read.scope,
    params: byId,
    found: { description: 'The webhook', schema: webhookSchema },
    read: ({ tenant, params, deps }) => getWebhook(tenant, deps.pool, params.id),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks',
    operationId: 'createWebhook',
    summary: 'Create a webhook',
    description:
      'events: a list of event types, or null (or omitted) for all. The url must be http(s) on a public host (422 otherwise, ' +
      'unless the service allows private receivers). The answer carries the signing secret, shown only here. ' +
      '409 webhook_limit_reached when the instance already has WEBHOOK_MAX_PER_INSTANCE webhooks (default 20; paused ones count).',
    tag,
    auth: write,
    body: webhookCreateSchema,
    success: { status: 201, description: 'The webhook and its signing secret', schema: webhookWithSecretSchema },
    errors: [409],
    handler: ({ tenant, body, deps }, res) => {
      // The answer holds the signing secret: kept by no cache on the way (as a new API key is).
      res.set('Cache-Control', 'no-store');
      return createWebhook(tenant, deps.pool, body, receiverPolicy(deps.config), deps.config.webhooks.maxPerInstance);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/webhooks/{id}',
    operationId: 'updateWebhook',
    summary: 'Change a webhook, pause or resume it',
    description: 'Only the fields given change. is_active true resumes a paused webhook and clears auto_paused_at; false pauses it.',
    tag,
    auth: write,
    params: byId,
    body: webhookPatchSchema,
    success: { status: 200, description: 'The webhook', schema: webhookSchema },
    errors: [404],
    handler: ({ tenant, params, body, deps }) => updateWebhook(tenant, deps.pool, params.id, body, receiverPolicy(deps.config)),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/webhooks/{id}',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description: 'Its pending deliveries and its delivery log go with it.',
    tag,
    auth: write,
    params: byId,
    success: { status: 204, description: 'Deleted' },
    errors: [404],
    handler: async ({ tenant, params, deps }, res) => {
      await deleteWebhook(tenant, deps.pool, params.id);
      res.status(204).end();
      return undefined;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/{id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing secret',
    description:
      'A new secret signs from now. Without expire_previous the previous one keeps signing beside it for 24 hours (two ' +
      'signatures, the new first); rotating again inside them discards the oldest. With expire_previous: true only the new one signs.',
    tag,
    auth: write,
    params: byId,
    body: rotateSecretSchema,
    bodyRequired: false,
    success: { status: 200, description: 'The webhook, previous_secret_expires_at and the new secret', schema: webhookWithSecretSchema },
    errors: [404],
    handler: ({ tenant, params, body, deps }, res) => {
      res.set('Cache-Control', 'no-store');
      return rotateSecret(tenant, deps.pool, params.id, body?.expire_previous ?? false);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/{id}/test',
    operationId: 'testWebhook',
    summary: 'Send a test event',
    description: 'A webhook.test event to this webhook now, whatever its event filter; signed, retried and logged like every event.',
    tag,
    auth: write,
    params: byId,
    success: { status: 202, description: 'Queued', schema: testEventSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => sendTestEvent(tenant, deps.pool, params.id),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'List delivery attempts',
    description: 'Every attempt, newest first (kept WEBHOOK_RETENTION_DAYS). total_items is null.',
    tag,
    auth: read,
    params: byId,
    query: attemptFilterQuery,
    success: { status: 200, description: 'A page of attempts', schema: collectionSchema(attemptSchema) },
    errors: [404],
    handler: ({ tenant, params, query, deps }) => listAttempts(tenant, deps.pool, params.id, query),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
    operationId: 'retryWebhookDelivery',
    summary: 'Redeliver one event now',
    description: "The delivery's event again (same webhook-id), now, as a new delivery. 409 webhook_inactive while the webhook is paused.",
    tag,
    auth: write,
    params: { id: resourceId, delivery_id: resourceId },
    success: {
      status: 202,
      description: 'Queued',
      schema: { type: 'object', required: ['delivery_id', 'event_id'], properties: { delivery_id: { type: 'integer' }, event_id: { type: 'string' } } },
    },
    errors: [404, 409],
    handler: ({ tenant, params, deps }) => retryDelivery(tenant, deps.pool, deps.queue, params.id, params.delivery_id, deps.config.webhooks.timeoutSeconds),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/{id}/replay',
    operationId: 'replayWebhook',
    summary: 'Send every event of a time window again',
    description:
      'Every event of [since, until) this webhook subscribes to, in order, e.g. after a receiver outage or a pause (each keeps ' +
      'its webhook-id). Events are kept WEBHOOK_RETENTION_DAYS. 409 webhook_inactive while the webhook is paused: resume it first.',
    tag,
    auth: write,
    params: byId,
    body: replaySchema,
    success: {
      status: 202,
      description: 'How many deliveries were queued',
      schema: { type: 'object', required: ['queued'], properties: { queued: { type: 'integer' } } },
    },
    errors: [404, 409],
    handler: ({ tenant, params, body, deps }) =>
      replay(tenant, deps.pool, deps.queue, params.id, new Date(body.since), body.until === undefined ? undefined : new Date(body.until), deps.config.webhooks.timeoutSeconds),
  }),
];
