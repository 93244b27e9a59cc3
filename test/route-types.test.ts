import t from 'tap';
import { defineRoute, type RouteContext } from '../api/http/route.js';
import { TAGS } from '../api/routes/tags.js';
import { sendBodySchema } from '../api/schemas/mails.js';
import type { SendRequest } from '../domain/mail/accept.js';
import { compile } from '../domain/validation.js';

/**
 * Types from schemas (docs/architecture.md): defineRoute reads a handler's input types from the
 * declaration's `as const` schemas, and SendRequest is what sendBodySchema describes. The type
 * half of this file is checked by the build: a derivation that stops following its schema makes
 * `tsc` fail here. The run half holds the schema to the values its type admits.
 */

/** A and B are the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function sameType<T extends true>(): T | undefined {
  return undefined;
}

const route = defineRoute({
  method: 'post',
  path: '/v1/test-fixtures/typed/{id}',
  operationId: 'testTyped',
  summary: 'A route whose input types come from its schemas (test fixture)',
  description: 'never mounted',
  tag: TAGS.mails,
  auth: { kind: 'api_key', scope: 'mail:send' },
  params: { id: { type: 'integer', minimum: 1 } },
  query: { page: { type: 'integer', default: 1 }, q: { type: 'string' } },
  body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } } },
  success: { status: 200, description: 'never' },
  handler: async ({ params, query, body }) => ({ id: params.id, page: query.page, q: query.q ?? null, name: body.name, tags: body.tags ?? [] }),
});
type Ctx = Parameters<typeof route.handler>[0];
sameType<Same<Ctx['params'], { id: number }>>();
// A parameter with a default is always there after validation; one without may be absent.
sameType<Same<Ctx['query'], { page: number } & { q?: string }>>();
sameType<Same<Ctx['body'], { name: string; tags?: Array<'a' | 'b'> }>>();
sameType<Same<Ctx, RouteContext<Ctx['query'], Ctx['params'], Ctx['body']>>>();

// A body that may be left out (bodyRequired: false) may be undefined in the handler.
const optional = defineRoute({
  method: 'post',
  path: '/v1/test-fixtures/typed-optional',
  operationId: 'testTypedOptional',
  summary: 'A route whose body may be absent (test fixture)',
  description: 'never mounted',
  tag: TAGS.mails,
  auth: { kind: 'api_key', scope: 'mail:send' },
  body: { type: 'object', properties: { flag: { type: 'boolean', default: false } } },
  bodyRequired: false,
  success: { status: 200, description: 'never' },
  handler: async ({ body }) => ({ flag: body?.flag ?? false }),
});
sameType<Same<Parameters<typeof optional.handler>[0]['body'], { flag: boolean; [k: string]: unknown } | undefined>>();

// The fields with a default stay optional in SendRequest (the domain's senders leave them out).
sameType<Same<SendRequest['track_opens'], boolean | undefined>>();
sameType<Same<SendRequest['to'][number], { email: string; name?: string; variables?: { [k: string]: unknown } }>>();

t.test('a value of SendRequest is a body sendBodySchema accepts', async (t) => {
  const validate = compile<SendRequest>(sendBodySchema, 'json');
  const full: SendRequest = {
    from: 'news@example.com',
    to: [{ email: 'ann@example.org', name: 'Ann', variables: { plan: 'pro' } }],
    subject: 'Hi {{name}}',
    html: '<p>Hi</p>',
    text: 'Hi',
    variables: { plan: 'basic' },
    reply_to: 'help@example.com',
    headers: { 'X-Campaign': 'spring' },
    custom_msg_id: 'm-1',
    custom_group_code: 'g-1',
    test_mode: false,
    track_opens: true,
    track_clicks: true,
    purpose_ids: [1],
    attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGk=' }],
  };
  t.same(validate(structuredClone(full)), full);
  // What the type leaves out the validator fills in: the defaults the domain applies too.
  const filled = validate({ from: 'news@example.com', to: [{ email: 'ann@example.org' }] });
  t.same([filled.test_mode, filled.track_opens, filled.track_clicks], [false, true, true]);
  t.throws(() => validate({ ...full, unknown_field: 1 }), 'a field the type does not have is refused');
});
