import { defineRoute, type ApiKeyRoute, type Route, type RouteTag } from '../../api/http/route.js';
import { dateFilterQuery } from '../../api/schemas/common.js';
import { RateLimited } from '../../domain/errors.js';
import { toUtcRange, type LocalDateFilter } from '../../domain/time/local-date-range.js';

/**
 * Routes that exist only in tests, mounted with startTestWeb(t, dbs, { extraRoutes }) through the
 * very same pipeline as the public API (auth, body limits, validation, problem objects). The
 * public API of this issue is GET-only, so body handling is exercised here.
 */

/** The body limit of the echo route; the roomy route accepts four times as much. */
export const ECHO_MAX_BYTES = 1024;
export const ROOMY_MAX_BYTES = 4096;

/** The message the boom route throws: it must never reach a client. */
export const SECRET_ERROR = 'select * from secret_table failed';

export const echoBodySchema = {
  type: 'object',
  required: ['recipients'],
  additionalProperties: false,
  properties: {
    recipients: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['email'],
        additionalProperties: false,
        properties: {
          email: { type: 'string', format: 'email' },
          name: { type: 'string', maxLength: 5 },
        },
      },
    },
    // A plain enum with a default: code `enum`, default filled in when absent.
    kind: { type: 'string', enum: ['news', 'billing'], default: 'news' },
    // A fixed list whose spec code is literal_error (like `lang`).
    lang: { type: 'string', enum: ['es', 'en'], 'x-error-code': 'literal_error' },
    count: { type: 'integer' },
    // Free keys, so a key with `/` or `~` can appear in a pointer below the root.
    meta: { type: 'object', additionalProperties: { type: 'string', maxLength: 3 } },
  },
};

/** The OpenAPI tag of the routes that exist only in tests. */
export const FIXTURE_TAG: RouteTag = { name: 'Test fixtures', description: 'Routes a test mounts to exercise the pipeline; never in the service.' };

/**
 * A route that exists only in tests: an API-key route any test key can call (senders:read, the
 * default scope of makeTenant), answering 200, under the 'Test fixtures' tag of the OpenAPI
 * document. The declaration says only what the fixture is for (its description, the summary when not said).
 */
export function fixtureRoute<Q = Record<string, never>, P = Record<string, never>, B = undefined>(
  route: Omit<ApiKeyRoute<Q, P, B>, 'tag' | 'auth' | 'success' | 'description'> & {
    description?: string;
    /** What its 200 holds (the summary when not said). */
    answers?: string;
  },
): ApiKeyRoute<Q, P, B> {
  const { answers = route.summary, description = route.summary, ...rest } = route;
  return defineRoute<Q, P, B>({
    ...rest,
    description,
    tag: FIXTURE_TAG,
    auth: { kind: 'api_key', scope: 'senders:read' },
    success: { status: 200, description: answers },
  });
}

export const fixtureRoutes: Route[] = [
  fixtureRoute<Record<string, never>, Record<string, never>, unknown>({
    method: 'post',
    path: '/v1/test-fixtures/echo',
    operationId: 'testEcho',
    summary: 'Echo the validated body (test fixture)',
    maxBodyBytes: ECHO_MAX_BYTES,
    body: echoBodySchema,
    answers: 'The validated body',
    handler: async ({ body }) => ({ body }),
  }),
  fixtureRoute<Record<string, never>, Record<string, never>, unknown>({
    method: 'post',
    path: '/v1/test-fixtures/roomy',
    operationId: 'testRoomy',
    summary: 'Accept any JSON object up to a larger limit (test fixture)',
    maxBodyBytes: ROOMY_MAX_BYTES,
    body: { type: 'object' },
    answers: 'Size of the body received',
    handler: async ({ body }) => ({ received_bytes: Buffer.byteLength(JSON.stringify(body)) }),
  }),
  fixtureRoute({
    method: 'get',
    path: '/v1/test-fixtures/boom',
    operationId: 'testBoom',
    summary: 'Fail with an unclassified error (test fixture)',
    answers: 'never',
    handler: async () => {
      throw new Error(SECRET_ERROR);
    },
  }),
  fixtureRoute({
    method: 'get',
    path: '/v1/test-fixtures/rate-limited',
    operationId: 'testRateLimited',
    summary: 'Answer as if the bandwidth bucket were empty (test fixture)',
    answers: 'never',
    errors: [429],
    handler: async () => {
      throw new RateLimited(2.2);
    },
  }),
  fixtureRoute<LocalDateFilter>({
    method: 'get',
    path: '/v1/test-fixtures/date-range',
    operationId: 'testDateRange',
    summary: 'The UTC bounds of the local-date filter (test fixture)',
    query: { ...dateFilterQuery },
    answers: '{from, to, zone}',
    handler: async ({ query, tenant }) => toUtcRange(query, tenant.tz),
  }),
];
