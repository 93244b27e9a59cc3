import { acceptSend } from '../../domain/mail/accept.js';
import { acceptSendOnce } from '../../domain/mail/idempotency.js';
import { getMail, listMailLogs, listMails } from '../../domain/mail/mails.js';
import type { PageRequest } from '../../domain/pagination.js';
import { idempotencyKey, idempotencyKeyHeader } from '../http/idempotency-key.js';
import { defineRoute } from '../http/route.js';
import { listRoute, readRoute } from './reads.js';
import { collectionSchema, paginationQuery } from '../schemas/common.js';
import { mailLogSchema, mailSchema, SEND_MAX_BYTES, sendAcceptedSchema, sendBodySchema, sentFilterQuery } from '../schemas/mails.js';
import { TAGS } from './tags.js';

const mailIdParam = { mail_id: { type: 'string', minLength: 1, maxLength: 64 } };

export const mailRoutes = [
  // Its body's type is read from sendBodySchema (written `as const`): acceptSend takes what the schema describes.
  defineRoute({
    method: 'post',
    path: '/v1/mails/send',
    operationId: 'sendMail',
    summary: 'Send a mail to up to 500 recipients',
    description:
      'Accepted whole or not at all: one Mail per recipient (status 1 received) sharing one msg_id, sent by the workers. ' +
      'Recipients with a restriction in force, or without consent when the sender requires it, are dropped (status 4) ' +
      'and never contacted; mails over the monthly quota wait on hold (status 7). ' +
      'Optional header Idempotency-Key (1-255 characters, scoped to the instance, kept 24 hours): the same body again under the key ' +
      'answers the first 202 (same msg_id and mails) and sends nothing, even if the sender or template changed since; another body ' +
      'under the key is 422 idempotency_key_reused.',
    tag: TAGS.mails,
    auth: { kind: 'api_key', scope: 'mail:send' },
    requestHeaders: {
      'Idempotency-Key': idempotencyKeyHeader(
        'Optional. The same body sent again under this key within 24 hours answers the first 202 and sends nothing (scoped to the instance).',
      ),
    },
    body: sendBodySchema,
    maxBodyBytes: SEND_MAX_BYTES,
    success: { status: 202, description: 'Accepted', schema: sendAcceptedSchema },
    errors: [404, 409, 413, 429],
    handler: async ({ tenant, body, deps }, res) => {
      const key = idempotencyKey(res.req.get('Idempotency-Key'));
      if (key === undefined) return acceptSend(tenant, deps.pool, deps.queue, body, deps.config.render);
      return (await acceptSendOnce(tenant, deps.pool, deps.queue, body, { door: 'api', key }, deps.config.render)).accepted;
    },
  }),
  listRoute({
    path: '/v1/mails',
    operationId: 'listMails',
    summary: 'List mails of the last 3 months',
    description: 'Same query and rows as GET /v1/activities/sent, with the 3-month online window applied as a filter. total_items is null.',
    tag: TAGS.mails,
    scope: 'mail:read',
    query: sentFilterQuery,
    page: { description: 'A page of mails, newest first', item: mailSchema },
    list: listMails,
  }),
  readRoute<{ mail_id: string }>({
    path: '/v1/mails/{mail_id}',
    operationId: 'getMail',
    summary: 'Read a mail',
    description:
      'One recipient’s delivery record, with its status (1-7) and counts of opens and clicks. No date range is needed: ' +
      'any mail of the 3-month online retention window is found. 404 mail_not_found when the instance has no such mail, ' +
      '404 mail_outside_retention when the id dates from before the window (its age is in the id).',
    tag: TAGS.mails,
    scope: 'mail:read',
    params: mailIdParam,
    found: { description: 'The mail', schema: mailSchema },
    read: ({ tenant, params, deps }) => getMail(tenant, deps.pool, params.mail_id),
  }),
  defineRoute<PageRequest, { mail_id: string }>({
    method: 'get',
    path: '/v1/mails/{mail_id}/logs',
    operationId: 'listMailLogs',
    summary: "A mail's state moves, oldest first",
    description:
      'Every status the mail went through (received, queued, sent, deferred, bounced, ...), each with its time and, for ' +
      'a delivery attempt, the attempt number, the SMTP code, enhanced code and reply of the receiving server: the ' +
      'record to read when a mail bounced or is still deferred. 404 as GET /v1/mails/{mail_id}.',
    tag: TAGS.mails,
    auth: { kind: 'api_key', scope: 'mail:read' },
    params: mailIdParam,
    query: { ...paginationQuery },
    success: { status: 200, description: 'A page of state moves', schema: collectionSchema(mailLogSchema) },
    errors: [404],
    handler: ({ tenant, params, query, deps }) => listMailLogs(tenant, deps.pool, params.mail_id, query),
  }),
];
