import type { JsonSchema } from '../../domain/validation.js';

/** Shared pagination query parameters (spec: Conventions and Limits). */
export const paginationQuery = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, first page is 1.' },
  page_size: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Items per page, 1-100.' },
} as const satisfies Record<string, JsonSchema>;

/** A resource id in a path: a positive integer up to 2^53-1 (past it, a JSON number loses precision). */
export const resourceId = { type: 'integer', minimum: 1, maximum: 9007199254740991 } as const satisfies JsonSchema;

export function objectSchema(properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', properties, required, ...extra };
}

/**
 * An object whose every property is always there and nothing else is: `required` lists them all,
 * in their order (most response rows; a body whose fields are all required).
 */
export function closedObject(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', required: Object.keys(properties), additionalProperties: false, properties };
}

/**
 * `base`, an object schema, with `extra` properties after its own, each required: one answer of
 * a resource that shows more than its listing (a domain with its records, a created sender, a
 * webhook with its secret), so the extra fields are named once, with their schemas.
 */
export function withRequired(base: JsonSchema, extra: Record<string, JsonSchema>): JsonSchema {
  return {
    ...base,
    required: [...(base.required as string[]), ...Object.keys(extra)],
    properties: { ...(base.properties as Record<string, JsonSchema>), ...extra },
  };
}

export const paginationSchema: JsonSchema = {
  type: 'object',
  required: ['page', 'page_size', 'has_more', 'total_items', 'total_pages'],
  properties: {
    page: { type: 'integer' },
    page_size: { type: 'integer' },
    has_more: { type: 'boolean' },
    total_items: { type: ['integer', 'null'] },
    total_pages: { type: ['integer', 'null'] },
  },
};

export function collectionSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['data', 'pagination'],
    properties: { data: { type: 'array', items: item }, pagination: paginationSchema },
  };
}

export const dateTime = { type: 'string', format: 'date-time' } as const satisfies JsonSchema;
export const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const satisfies JsonSchema;

/** Local-date filters shared by the activity listings: start_date, end_date, tz. */
export const dateFilterQuery = {
  start_date: { type: 'string', format: 'date', description: 'Local date YYYY-MM-DD in tz (inclusive).' },
  end_date: { type: 'string', format: 'date', description: 'Local date YYYY-MM-DD in tz (inclusive).' },
  tz: { type: 'string', maxLength: 64, description: "IANA zone; default the instance's zone, else UTC." },
} satisfies Record<string, JsonSchema>;
