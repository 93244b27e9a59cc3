import { DATASET_CHANNELS } from '../../domain/datasets/declaration.js';
import { FIELD_TYPES } from '../../domain/fields/types.js';
import { CONNECTED_FORMS_CHOICES } from '../../domain/forms/dataset-columns.js';
import { UPLOAD_MODES } from '../../domain/lists/modes.js';
import type { JsonSchema } from '../../domain/validation.js';
import { dateTime } from './common.js';

/**
 * The panel-only datasets, fields and lists operations' bodies and answers (docs/panel.md,
 * Datasets): what `cartero field create`, `dataset create|update|import` and `list
 * create|upload|show|delete` take as flags, as JSON. The schemas refuse the shapes (422); what
 * only the domain judges is its refusal, answered as a 422 on the same field
 * (api/routes/panel/datasets.ts).
 */

const notBlank = '\\S';
const name = { type: 'string', minLength: 1, maxLength: 255, pattern: notBlank, description: 'Unique in the instance ignoring case and accents.' } as const;

export const fieldKeyParam: JsonSchema = { type: 'string', minLength: 1, maxLength: 63, description: 'The field_key.' };

export const fieldCreateSchema: JsonSchema = {
  type: 'object',
  required: ['key', 'name', 'type'],
  additionalProperties: false,
  properties: {
    key: { type: 'string', minLength: 1, maxLength: 63, description: 'Lower-case letters, digits and _, starting with a letter; reserved forever (409 field_key_reserved once deleted).' },
    name,
    type: { type: 'string', enum: [...FIELD_TYPES] },
    max_length: { type: 'integer', minimum: 1, maximum: 1000000, description: 'text and email.' },
    pattern: { type: 'string', minLength: 1, maxLength: 500, description: 'text: an ECMAScript regular expression the whole value must match; one that could take more than linear time is refused.' },
    min: { type: 'number', description: 'number.' },
    max: { type: 'number', description: 'number.' },
    options: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', maxLength: 255 }, description: 'select: its values.' },
  },
};

const channel: JsonSchema = {
  type: ['array', 'null'],
  minItems: 1,
  maxItems: DATASET_CHANNELS.length,
  items: { type: 'string', enum: [...DATASET_CHANNELS] },
  description: 'The enabled channels; null declares none (identity_field must then be given).',
};

const columns: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 500,
  description: 'The columns by field_key; they must include the identity field.',
  items: {
    type: 'object',
    required: ['key'],
    additionalProperties: false,
    properties: { key: { type: 'string', minLength: 1, maxLength: 63 }, required: { type: 'boolean', default: false } },
  },
};

export const datasetCreateSchema: JsonSchema = {
  type: 'object',
  required: ['name', 'columns'],
  additionalProperties: false,
  properties: {
    name,
    description: { type: ['string', 'null'], maxLength: 5000 },
    channel,
    identity_field: { type: ['string', 'null'], maxLength: 63, description: 'Needed with several channels or none; with exactly one the channel fixes it.' },
    columns,
  },
};

export const datasetPatchSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name,
    description: { type: ['string', 'null'], maxLength: 5000, description: "null or '' empties it." },
    channel,
    identity_field: { type: ['string', 'null'], maxLength: 63 },
    columns: { ...columns, description: 'The whole new declaration.' },
    connected_forms: { type: 'string', enum: [...CONNECTED_FORMS_CHOICES], description: 'Connected forms left short by the change: align them or keep them (absent: 409 dataset_columns_not_collected_by_forms).' },
    is_active: { type: 'boolean', description: 'false: no longer offered to forms; it still receives contacts.' },
  },
};

export const importKey: JsonSchema = { type: 'string', pattern: '^[A-Za-z0-9_-]{8,64}$', description: 'The import\'s key, chosen by the page (8 to 64 letters, digits, _ or -).' };

export const importQuery: Record<string, JsonSchema> = {
  key: { ...importKey, description: 'A key of the page\'s choosing, so it can poll GET /v1/private/imports/{key} while this request runs; one is made if absent.' },
  map: {
    type: 'string',
    maxLength: 100000,
    description: 'How CSV columns are read, as a JSON object: header → field_key, or null to skip it. Columns not named map to the field named like their header.',
  },
};

export const uploadQuery: Record<string, JsonSchema> = {
  key: importQuery.key!,
  mode: { type: 'string', enum: [...UPLOAD_MODES], description: 'append adds rows; overwrite replaces every row (all or nothing).' },
  header: { type: 'boolean', default: false, description: 'The first row is a header: skipped.' },
};

const reject: JsonSchema = {
  type: 'object',
  properties: { row: { type: 'integer' }, code: { type: 'string' }, field: { type: ['string', 'null'] }, rule: { type: ['string', 'null'] }, detail: { type: 'string' } },
};

export const importProgressSchema: JsonSchema = {
  type: 'object',
  required: ['key', 'kind', 'target_id', 'status', 'bytes_read', 'bytes_total', 'percent', 'started_at', 'finished_at', 'summary', 'error', 'rejects_url'],
  properties: {
    key: { type: 'string' },
    kind: { type: 'string', enum: ['dataset_import', 'list_upload'] },
    target_id: { type: 'integer', description: 'The dataset or list.' },
    status: { type: 'string', enum: ['reading', 'merging', 'done', 'failed'], description: 'merging: every byte is read, the rows are being written (no measure of its own).' },
    bytes_read: { type: 'integer' },
    bytes_total: { type: ['integer', 'null'], description: 'The request\'s Content-Length; null when it was not sent.' },
    percent: { type: ['integer', 'null'], description: '0 to 100: the bytes read of the total; 100 once done.' },
    started_at: dateTime,
    finished_at: { ...dateTime, type: ['string', 'null'] },
    summary: { type: ['object', 'null'], description: 'When done: what the import or upload request answered.' },
    error: { type: ['object', 'null'], properties: { code: { type: 'string' }, detail: { type: 'string' } }, description: 'When failed: the problem the request answered.' },
    rejects_url: { type: ['string', 'null'], description: 'When done with refused rows: the rejects file.' },
  },
};

export const importSummarySchema: JsonSchema = {
  type: 'object',
  required: ['key', 'dataset_id', 'rows', 'accepted', 'rejected', 'created', 'updated', 'unchanged', 'duplicates', 'first_rejects', 'rejects_url'],
  properties: {
    key: { type: 'string' },
    dataset_id: { type: 'integer' },
    rows: { type: 'integer' },
    accepted: { type: 'integer' },
    rejected: { type: 'integer' },
    created: { type: 'integer' },
    updated: { type: 'integer' },
    unchanged: { type: 'integer' },
    duplicates: { type: 'integer' },
    first_rejects: { type: 'array', items: reject },
    rejects_url: { type: ['string', 'null'] },
  },
};

export const listCreateSchema: JsonSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name,
    columns: {
      type: 'array',
      maxItems: 500,
      items: {
        type: 'object',
        required: ['key', 'position'],
        additionalProperties: false,
        properties: { key: { type: 'string', minLength: 1, maxLength: 63 }, position: { type: 'integer', minimum: 1, maximum: 100000 } },
      },
      description: 'Each column a catalog field at a 1-based position of the file; without them no file can be uploaded.',
    },
    max_rows: { type: 'integer', minimum: 1, maximum: 2147483647, description: 'Default 1,000,000.' },
  },
};

export const listSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'columns', 'max_rows', 'rows', 'uploads', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    columns: { type: 'array', items: { type: 'object', properties: { field_key: { type: 'string' }, position: { type: 'integer' } } } },
    max_rows: { type: 'integer' },
    rows: { type: 'integer', description: 'Rows of its live uploads.' },
    uploads: { type: 'array', items: { type: 'object' } },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

export const uploadSummarySchema: JsonSchema = {
  type: 'object',
  required: ['key', 'list', 'upload_id', 'rows', 'accepted', 'rejected', 'first_rejects', 'rejects_url'],
  properties: {
    key: { type: 'string' },
    list: listSchema,
    upload_id: { type: 'integer' },
    rows: { type: 'integer' },
    accepted: { type: 'integer' },
    rejected: { type: 'integer' },
    first_rejects: { type: 'array', items: reject },
    rejects_url: { type: ['string', 'null'] },
  },
};
