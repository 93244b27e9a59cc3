import type { Route } from './http/route.js';
import { DEFAULT_MAX_BODY_BYTES } from './http/route.js';
import type { JsonSchema } from '../domain/validation.js';
import { webhookEventsOpenApi } from './schemas/webhook-events.js';
import { ERROR_CATALOG, STATUS_TITLES, type ErrorStatus } from '../errors/catalog.js';

// What any route can answer whatever it declares: authentication (API key and panel routes; a
// panel route of an instance also the missing slug, the role and the instance not its user's),
// validation, and the server's own failures.
const COMMON_ERRORS = {
  api_key: [401, 403, 422, 500, 503],
  session: [401, 422, 500, 503],
  member: [400, 401, 403, 404, 422, 500, 503],
  public: [422, 500, 503],
} as const;

function commonErrors(r: Route): readonly number[] {
  if (r.auth.kind === 'session') return COMMON_ERRORS[r.auth.role ? 'member' : 'session'];
  return COMMON_ERRORS[r.auth.kind];
}

const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];

// What a status's answers carry beyond the code; the codes and the title are the catalog's.
const STATUS_NOTES: Partial<Record<ErrorStatus, string>> = {
  401: 'always with WWW-Authenticate: Bearer',
  409: 'the code names the business rule',
  410: 'what the link names is no longer actionable',
  413: 'with max_bytes',
  422: 'errors[] lists each failed field',
  429: 'with Retry-After',
  503: 'a dependency did not answer; retry (Retry-After)',
};

/** The codes the HTTP API can answer with a status, from the catalog (the CLI's own, and the spec's never answered here, left out). */
function codesOf(status: number): string[] {
  return Object.entries(ERROR_CATALOG)
    .filter(([, e]) => e.status === status && !e.cli && !e.notEmitted)
    .map(([code]) => code);
}

/** A status's description: the catalog's title, its codes (or how many, when many), its note. */
function errorDescription(status: number, codes: string[]): string {
  const title = STATUS_TITLES[status as ErrorStatus] ?? 'Error';
  const listed = codes.length <= 4 ? codes.join(', ') : `one of ${codes.length} codes (x-problem-codes; docs/api-conventions.md lists them)`;
  const note = STATUS_NOTES[status as ErrorStatus];
  return `${title}: ${listed}${note ? `; ${note}` : ''}`;
}

const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'trace_id'],
  properties: {
    type: { type: 'string', format: 'uri', description: 'URI ending in the kebab-case error name' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'A code of the error catalog (docs/api-conventions.md, Error codes); x-problem-codes lists those of each response' },
    trace_id: { type: 'string', description: 'Equals the X-Request-Id response header' },
    max_bytes: { type: 'integer', description: 'On 413 caused by the body limit' },
    errors: {
      type: 'array',
      description: 'On 422: one item per failed field',
      items: {
        type: 'object',
        required: ['pointer', 'code', 'message'],
        properties: {
          pointer: { type: 'string', description: 'RFC 6901 JSON Pointer; empty string for the body root' },
          code: { type: 'string', description: 'A code of the catalog of errors[] codes (docs/api-conventions.md, Error codes)' },
          message: { type: 'string' },
          params: { type: 'object' },
        },
      },
    },
  },
};

/** Strip the annotations only our validator understands. */
function clean(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(clean);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(
      Object.entries(schema).filter(([k]) => k !== 'x-error-code').map(([k, v]) => [k, clean(v)]),
    );
  }
  return schema;
}

function parameters(where: 'path' | 'query' | 'header', props: Record<string, JsonSchema> | undefined): unknown[] {
  return Object.entries(props ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema as JsonSchema & { description?: string };
    return { name, in: where, required: where === 'path', schema: clean(rest), ...(description ? { description } : {}) };
  });
}

/** How the route is authenticated: the API key and its scope, a panel session (and the role it needs), or nothing (a public link). */
function security(r: Route): Record<string, unknown> {
  if (r.auth.kind === 'public') return { security: [], 'x-public': true };
  if (r.auth.kind === 'session') {
    return r.auth.role ? { security: [{ panelSession: [], instanceSlug: [] }], 'x-panel-role': r.auth.role } : { security: [{ panelSession: [] }] };
  }
  return { security: [{ apiKey: [], instanceSlug: [] }], 'x-required-scope': r.auth.scope };
}

function requestBody(r: Route): Record<string, unknown> {
  if (!r.body) return {};
  const limit = `At most ${r.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES} bytes after decompression.`;
  if (r.bodyType === 'form') {
    return {
      requestBody: {
        required: false,
        description: `${limit} A form: read as multipart/form-data when it says so, as urlencoded otherwise, whatever its Content-Type; unknown fields are ignored.`,
        content: Object.fromEntries(FORM_TYPES.map((type) => [type, { schema: clean(r.body) }])),
      },
    };
  }
  return { requestBody: { required: r.bodyRequired ?? true, description: limit, content: { 'application/json': { schema: clean(r.body) } } } };
}

function successResponse(r: Route): Record<string, unknown> {
  const { description, schema, contentType, headers } = r.success;
  return {
    description,
    ...(headers ? { headers: Object.fromEntries(Object.entries(headers).map(([name, h]) => [name, { description: h.description, schema: clean(h.schema) }])) } : {}),
    ...(schema ? { content: { [contentType ?? 'application/json']: { schema: clean(schema) } } } : {}),
  };
}

const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

/** OpenAPI 3.1 generated from the route declarations, so it cannot drift from what runs. */
export function buildOpenApi(routes: Route[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    // A JSON body can be malformed (400), too large (413) or not JSON (415); a form only too large.
    const bodyErrors = !r.body ? [] : r.bodyType === 'form' ? [400, 413] : [400, 413, 415];
    const statuses = [...new Set([...commonErrors(r), ...(r.errors ?? []), ...bodyErrors])].sort();
    const responses: Record<string, unknown> = { [r.success.status]: successResponse(r) };
    for (const s of statuses) {
      const page = r.errorPages && r.errors?.includes(s);
      const codes = codesOf(s);
      responses[s] = {
        description: errorDescription(s, codes) + (page ? '; an HTML page when the client prefers text/html (a browser)' : ''),
        'x-problem-codes': codes,
        content: page ? { ...PROBLEM_CONTENT, 'text/html': { schema: { type: 'string' } } } : PROBLEM_CONTENT,
      };
    }
    paths[r.path] ??= {};
    paths[r.path]![r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      ...security(r),
      parameters: [...parameters('path', r.params), ...parameters('query', r.query), ...parameters('header', r.requestHeaders)],
      ...requestBody(r),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cartero API',
      version: '1.0.0',
      description:
        'Email sending, consent and forms. Every /v1 call needs Authorization: Bearer <key> and X-Instance-Slug. The public links ' +
        'Cartero puts in mails (operations with empty security, x-public) need neither: the signed token in the path is the credential. ' +
          'The /v1/private operations (tag Panel) are the operator panel\'s: Authorization: Bearer <session token> from POST ' +
          '/v1/private/sessions, and X-Instance-Slug where x-panel-role names the role they need (docs/panel.md).',
    },
    servers: [{ url: serverUrl }],
    paths,
    webhooks: webhookEventsOpenApi(),
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key <prefix>.<key_id>.<token>' },
        instanceSlug: { type: 'apiKey', in: 'header', name: 'X-Instance-Slug' },
        panelSession: { type: 'http', scheme: 'bearer', description: 'Operator panel session token crtsess_<43 base64url characters>, from POST /v1/private/sessions; expires when unused for PANEL_SESSION_TTL_SECONDS' },
      },
      schemas: { Problem: problemSchema },
    },
  };
}
