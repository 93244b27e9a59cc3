import { TEMPLATE_LIMITS, TEMPLATE_STATUSES } from '../../domain/templates/templates.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime, withRequired } from './common.js';

const nullableText = (max: number, description: string): JsonSchema => ({ type: ['string', 'null'], maxLength: max, description });

/** A finding (engines/beefree/findings.ts) as responses carry it. */
export const findingSchema: JsonSchema = {
  type: 'object',
  required: ['level', 'rule', 'uuid', 'pointer', 'message'],
  properties: {
    level: { type: 'string', enum: ['error', 'warning', 'suggestion'] },
    rule: { type: 'string', description: 'Stable rule name.' },
    uuid: { type: ['string', 'null'], description: 'The node the finding is about, or its nearest ancestor with a uuid.' },
    pointer: { type: 'string', description: 'JSON Pointer into config.' },
    message: { type: 'string' },
    params: { type: 'object' },
  },
};

const summaryProperties: Record<string, JsonSchema> = {
  id: { type: 'integer' },
  name: { type: 'string', description: '1-255 characters; unique per instance ignoring case and accents.' },
  subject: { type: ['string', 'null'] },
  preheader: { type: ['string', 'null'], description: 'Already included in html as a hidden block at the start of the body.' },
  status: { type: 'string', enum: [...TEMPLATE_STATUSES], description: 'A draft is sendable only with test_mode: true.' },
  description: { type: ['string', 'null'] },
  provider: { type: 'string', enum: ['native', 'external'], description: 'external: listable, publishable and sendable, never editable.' },
  created_at: dateTime,
  updated_at: dateTime,
};

/** A template in a listing: no html, config or findings. */
export const templateSummarySchema: JsonSchema = closedObject(summaryProperties);

/** A template as a read, create or PATCH answers it. */
export const templateSchema: JsonSchema = withRequired(templateSummarySchema, {
  html: { type: ['string', 'null'], description: 'Generated from config (and preheader); never accepted as input.' },
  config: { type: ['object', 'null'], description: 'The design document as stored (its compact JSON), at most 262144 bytes.' },
  findings: { type: 'array', items: findingSchema, description: 'Warnings and suggestions about the stored document.' },
});

/**
 * The fields a write sets. Only those present change; null empties (name excepted: null is 422
 * value_error). A body may carry everything a read returned: id, status, provider, html,
 * findings, the dates, and any field the schema does not list are ignored, so a read can be sent
 * back with its config modified (html is never accepted: it is ignored, never stored).
 */
const writableProperties: Record<string, JsonSchema> = {
  name: {
    // null is refused as value_error (spec), before the type says string_type.
    allOf: [{ not: { type: 'null' }, 'x-error-code': 'value_error' }, { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.name }],
    description: '1-255 characters; null not accepted; unique ignoring case and accents.',
  },
  subject: nullableText(TEMPLATE_LIMITS.subject, 'Up to 254 characters; null empties it.'),
  preheader: nullableText(TEMPLATE_LIMITS.preheader, 'Up to 255 characters; changing it regenerates html.'),
  description: nullableText(TEMPLATE_LIMITS.description, 'Up to 5000 characters.'),
  config: {
    type: ['object', 'null'],
    description:
      'The complete design document (GET /v1/mail-templates/format), replacing the current one; at most 262144 bytes as compact JSON ' +
      '(UTF-8), else 413 request_too_large with max_bytes. null empties the design and html.',
  },
};

export const templatePatchSchema: JsonSchema = { type: 'object', properties: writableProperties };

export const templateCreateSchema: JsonSchema = { type: 'object', required: ['name'], properties: writableProperties };

/** POST /v1/mail-templates/validate: the document and the texts its findings look at. */
export const templateValidateSchema: JsonSchema = {
  type: 'object',
  required: ['config'],
  properties: { subject: writableProperties.subject!, preheader: writableProperties.preheader!, config: writableProperties.config! },
};

export const templateValidationSchema: JsonSchema = closedObject({
  findings: { type: 'array', items: findingSchema },
  html: { type: ['string', 'null'], description: 'What a create with this body would store.' },
});

/** GET /v1/mail-templates/format (spec: Template format description). */
export const templateFormatSchema: JsonSchema = {
  type: 'object',
  required: ['format', 'field_types', 'defaults', 'skeleton', 'modules'],
  properties: {
    format: { type: 'string', description: 'Markdown specification of the document, in the language asked.' },
    field_types: {
      type: 'object',
      required: ['nodes', 'descriptor_by_kind', 'css'],
      description: 'Fields per node type and the value type each accepts; a field not listed is unknown and has no effect.',
    },
    defaults: { type: 'object', required: ['row', 'column', 'modules'], description: 'Starting values of a new row, column and module (modules.<kind>).' },
    skeleton: { type: 'object', description: 'A minimal complete valid document without warnings.' },
    modules: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kind', 'type', 'content_key'],
        properties: { kind: { type: 'string' }, type: { type: 'string' }, content_key: { type: 'string' } },
      },
    },
  },
};

/** GET /v1/mail-templates/format/modules/{kind}. */
export const templateModuleSchema: JsonSchema = {
  type: 'object',
  required: ['kind', 'type', 'content_key', 'fields', 'defaults', 'example'],
  properties: {
    kind: { type: 'string' },
    type: { type: 'string', description: 'mailup-bee-newsletter-modules-<kind>' },
    content_key: { type: 'string', description: 'The descriptor key that holds the content.' },
    description: { type: 'string' },
    fields: { type: 'object', description: "The descriptor's node types, their fields and value types." },
    item_defaults: { type: 'object', description: "Starting values of a new item of the module's lists." },
    defaults: { type: 'object', description: 'A new module of the kind.' },
    example: { type: 'object', description: 'A complete module with example content, ready to put in a column.' },
  },
};
