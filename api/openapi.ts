import type { Route, RouteTag } from './http/route.js';
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

/**
 * Every status a route can answer besides its success: the common ones of its kind, its own, its
 * body's (a JSON body can be malformed (400), too large (413) or not JSON (415); a form only
 * too large; a streamed CSV also stalled (408, api/routes/panel/imports.ts)), and its other input's (a scalar query parameter given twice, a path segment that is
 * not percent-encoded UTF-8: 400, api/http/request-input.ts and api/http/errors.ts). The document
 * declares them, and api/http/answer-check.ts holds answers to them.
 */
export function errorStatuses(r: Route): number[] {
  const bodyErrors = r.bodyType === 'csv' ? [400, 408, 413, 415] : !r.body ? [] : r.bodyType === 'form' ? [400, 413] : [400, 413, 415];
  const inputErrors = Object.keys({ ...r.query, ...r.params }).length ? [400] : [];
  return [...new Set([...commonErrors(r), ...(r.errors ?? []), ...bodyErrors, ...inputErrors])].sort();
}

/** Whether the route answers this error status with an HTML page to a browser (errorPages). */
export function answersPage(r: Route, status: number): boolean {
  return Boolean(r.errorPages && r.errors?.includes(status));
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

/**
 * The codes a route can answer with a status, from the catalog: the CLI's own and the spec's
 * never answered here left out, and the panel's own (a login's, its members') only on the
 * panel's session routes.
 */
function codesOf(status: number, r: Route): string[] {
  return Object.entries(ERROR_CATALOG)
    .filter(([, e]) => e.status === status && !e.cli && !e.notEmitted && (!e.panel || r.auth.kind === 'session'))
    .map(([code]) => code);
}

/** A status's description: the catalog's title, every code it can carry (a reader of the reference sees them all), its note. */
function errorDescription(status: number, codes: string[]): string {
  const title = STATUS_TITLES[status as ErrorStatus] ?? 'Error';
  const note = STATUS_NOTES[status as ErrorStatus];
  return `${title}: ${codes.join(', ')}${note ? `; ${note}` : ''}`;
}

/**
 * The document's tags: each one its routes use, with its description, in the order the routes
 * first name it (the reference's sections follow it). Two routes naming one tag with two
 * descriptions would make one of them silently lost: refused.
 */
function declaredTags(routes: Route[]): RouteTag[] {
  const tags = new Map<string, RouteTag>();
  for (const { tag } of routes) {
    const seen = tags.get(tag.name);
    if (seen && seen.description !== tag.description) throw new Error(`OpenAPI tag ${tag.name} is declared with two descriptions`);
    tags.set(tag.name, { name: tag.name, description: tag.description });
  }
  return [...tags.values()];
}

export const problemSchema: JsonSchema = {
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
  if (r.bodyType === 'csv') {
    const limit = `At most ${r.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES} bytes.`;
    return { requestBody: { required: true, description: `${limit} A CSV file (UTF-8, comma-separated), streamed.`, content: { 'text/csv': { schema: { type: 'string' } } } } };
  }
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
  const { description, schema, contentType, headers, alternatives } = r.success;
  const others = Object.fromEntries(Object.entries(alternatives ?? {}).map(([type, s]) => [type, { schema: clean(s) }]));
  return {
    description,
    ...(headers ? { headers: Object.fromEntries(Object.entries(headers).map(([name, h]) => [name, { description: h.description, schema: clean(h.schema) }])) } : {}),
    ...(schema ? { content: { [contentType ?? 'application/json']: { schema: clean(schema) }, ...others } } : {}),
  };
}

/**
 * A description as CommonMark, which OpenAPI says descriptions are: the declarations write
 * placeholders as <key> or msg_<event id>, which a renderer (the /docs page) would take for HTML
 * tags and drop; outside code spans `<` is escaped, so it reads as written.
 */
function asCommonMark(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/</g, '\\<')))
    .join('');
}

// Values that are data, not prose: a `description` inside them is a field of an example.
const DATA_KEYS = new Set(['example', 'examples', 'default', 'enum', 'const']);

/** The document with every description in CommonMark (asCommonMark). */
function markdownDescriptions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(markdownDescriptions);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === 'description' && typeof v === 'string' ? asCommonMark(v) : DATA_KEYS.has(k) ? v : markdownDescriptions(v),
    ]),
  );
}

const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

/** OpenAPI 3.1 generated from the route declarations, so it cannot drift from what runs. */
export function buildOpenApi(routes: Route[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const responses: Record<string, unknown> = { [r.success.status]: successResponse(r) };
    for (const [status, { description, body }] of Object.entries(r.alsoAnswers ?? {})) {
      responses[status] = body === 'success' ? { ...successResponse(r), description } : { description };
    }
    for (const s of errorStatuses(r)) {
      const page = answersPage(r, s);
      const codes = codesOf(s, r);
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
      description: r.description,
      tags: [r.tag.name],
      ...security(r),
      parameters: [...parameters('path', r.params), ...parameters('query', r.query), ...parameters('header', r.requestHeaders)],
      ...requestBody(r),
      responses,
    };
  }
  return markdownDescriptions({
    openapi: '3.1.0',
    info: {
      title: 'Cartero API',
      version: '1.0.0',
      description:
        'Email sending, consent and forms. Every /v1 call needs `Authorization: Bearer <key>` and `X-Instance-Slug: <slug>`. The public links ' +
        'Cartero puts in mails (operations with empty security, x-public) need neither: the signed token in the path is the credential. ' +
        "The /v1/private operations (tag Panel) are the operator panel's: `Authorization: Bearer <session token>` from `POST " +
        "/v1/private/sessions`, and `X-Instance-Slug` where x-panel-role names the role they need (docs/panel.md).",
      // Who answers for this API is whoever runs this server: its reference is where to turn.
      contact: { name: 'Cartero API reference', url: `${serverUrl}/docs` },
    },
    servers: [{ url: serverUrl }],
    tags: declaredTags(routes),
    paths,
    webhooks: webhookEventsOpenApi(),
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: '<prefix>.<key_id>.<token>',
          description: 'An API key of the instance, sent as `Authorization: Bearer <key>`. Its scopes decide which operations it may call (x-required-scope); the admin CLI creates it (cartero key create) and shows it once.',
        },
        instanceSlug: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Instance-Slug',
          description: 'The slug of the instance the key belongs to; every /v1 call names it alongside the key.',
        },
        panelSession: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'crtsess_<43 base64url characters>',
          description: 'An operator panel session token, from `POST /v1/private/sessions`; it expires when unused for PANEL_SESSION_TTL_SECONDS, and PANEL_SESSION_MAX_AGE_SECONDS after the login at the latest (docs/panel.md).',
        },
      },
      schemas: { Problem: problemSchema },
    },
  }) as Record<string, unknown>;
}
