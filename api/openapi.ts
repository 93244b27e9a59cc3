import type { Route } from './route.js';
import { DEFAULT_MAX_BODY_BYTES } from './route.js';
import type { JsonSchema } from './validation.js';

const COMMON_ERRORS = [401, 403, 422, 500, 503];

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'bad_request: malformed request rejected before schema validation',
  401: 'unauthorized (always with WWW-Authenticate: Bearer)',
  403: 'forbidden (scope, disabled instance) or ip_not_allowed',
  404: '<resource>_not_found',
  405: 'method_not_allowed',
  409: 'a business rule, named by code',
  413: 'request_too_large, with max_bytes',
  415: 'unsupported_media_type',
  422: 'validation_error with errors[]',
  429: 'rate_limit_exceeded, with Retry-After',
  500: 'internal_error',
  503: 'service_unavailable: a dependency did not answer; retry',
};

const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'trace_id'],
  properties: {
    type: { type: 'string', format: 'uri', description: 'URI ending in the kebab-case error name' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
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
          code: { type: 'string' },
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

function parameters(where: 'path' | 'query', props: Record<string, JsonSchema> | undefined): unknown[] {
  return Object.entries(props ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema as JsonSchema & { description?: string };
    return { name, in: where, required: where === 'path', schema: clean(rest), ...(description ? { description } : {}) };
  });
}

/** OpenAPI 3.1 generated from the route declarations, so it cannot drift from what runs. */
export function buildOpenApi(routes: Route[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const statuses = [...new Set([...COMMON_ERRORS, ...(r.errors ?? []), ...(r.body ? [400, 413, 415] : [])])].sort();
    const responses: Record<string, unknown> = {
      [r.success.status]: {
        description: r.success.description,
        ...(r.success.schema ? { content: { [r.success.contentType ?? 'application/json']: { schema: clean(r.success.schema) } } } : {}),
      },
    };
    for (const s of statuses) {
      responses[s] = {
        description: ERROR_DESCRIPTIONS[s] ?? 'error',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
    paths[r.path] ??= {};
    paths[r.path]![r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      security: [{ apiKey: [], instanceSlug: [] }],
      'x-required-scope': r.scope,
      parameters: [...parameters('path', r.params), ...parameters('query', r.query)],
      ...(r.body
        ? {
            requestBody: {
              required: r.bodyRequired ?? true,
              description: `At most ${r.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES} bytes after decompression.`,
              content: { 'application/json': { schema: clean(r.body) } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cartero API',
      version: '1.0.0',
      description: 'Email sending, consent and forms. Every call needs Authorization: Bearer <key> and X-Instance-Slug.',
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key <prefix>.<key_id>.<token>' },
        instanceSlug: { type: 'apiKey', in: 'header', name: 'X-Instance-Slug' },
      },
      schemas: { Problem: problemSchema },
    },
  };
}
