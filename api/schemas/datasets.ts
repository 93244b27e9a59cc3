import { DATASET_CHANNELS } from '../../domain/datasets/declaration.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime, withRequired } from './common.js';

const summaryProperties: Record<string, JsonSchema> = {
  id: { type: 'integer', description: 'The {id} contacts are added to and records read from.' },
  name: { type: 'string' },
  is_active: {
    type: 'boolean',
    description: 'An inactive dataset is no longer offered when connecting a form, but still receives contacts by API and from forms already connected.',
  },
  channel: {
    type: ['array', 'null'],
    items: { type: 'string', enum: [...DATASET_CHANNELS] },
    description: 'Enabled channels. With exactly one, it decides the identifier: mail identifies by email; sms and wsp by phone.',
  },
  description: { type: ['string', 'null'] },
  created_at: dateTime,
  updated_at: { ...dateTime, description: 'Last change of the dataset itself, not of its contacts.' },
};

/** The Dataset resource of the spec as the listing shows it: no identifier, no columns. */
export const datasetSchema: JsonSchema = closedObject(summaryProperties);

/** GET /v1/datasets/{id}: the listing's fields plus the identifier and the column declaration. */
export const datasetDetailSchema: JsonSchema = withRequired(datasetSchema, {
  identity_field: { type: 'string', description: 'The field_key contacts are recognised by (upserted on).' },
  columns: {
    type: 'array',
    description: 'Declared columns in order, named by the field_key of the catalog.',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['field_key', 'required'],
      properties: { field_key: { type: 'string' }, required: { type: 'boolean' } },
    },
  },
});

const storedValue: JsonSchema = { type: ['string', 'number', 'boolean'] };

/** A dataset contact (record) as the contacts and records endpoints answer it (docs/datasets.md). */
export const recordSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  dataset_id: { type: 'integer' },
  identifier: { type: 'string', description: "The identity field's value as stored (emails lower-case, phones E.164): contacts are upserted on it." },
  values: {
    type: 'object',
    additionalProperties: storedValue,
    description: 'Every column the contact carries by field_key, typed as its field says (number, boolean, text; dates as YYYY-MM-DD).',
  },
  created_at: dateTime,
  updated_at: { ...dateTime, description: 'Last change of the values; a write that changes nothing leaves it.' },
});

const fieldErrorSchema: JsonSchema = {
  type: 'object',
  required: ['pointer', 'code', 'message'],
  properties: { pointer: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' }, params: { type: 'object' } },
};

/** The answer to a batch: one result per contact, in order, each as that contact alone would have been answered. */
export const contactBatchSchema: JsonSchema = closedObject({
  results: {
    type: 'array',
    items: {
      type: 'object',
      required: ['index', 'status'],
      properties: {
        index: { type: 'integer', description: 'Position of the contact in contacts[].' },
        status: { type: 'integer', enum: [200, 201, 409, 422], description: '201 new, 200 updated (or already so), 409/422 refused.' },
        record: recordSchema,
        code: { type: 'string', description: 'A refusal: the 409 rule, or validation_error for a 422.' },
        detail: { type: 'string' },
        errors: { type: 'array', items: fieldErrorSchema, description: 'A 422: each value refused, at /contacts/<index>/values/<field_key>.' },
      },
    },
  },
  created: { type: 'integer' },
  updated: { type: 'integer' },
  rejected: { type: 'integer' },
});

/** POST /v1/datasets/{id}/contacts: one contact ({values}) or a batch ({contacts: [{values}, ...]}). */
export const contactsBodySchema: JsonSchema = {
  type: 'object',
  properties: {
    values: { type: 'object', description: 'One contact: field_key to value. Empty values (null, "", spaces) count as not given.' },
    contacts: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: { description: '{values: {...}}; each checked on its own, a bad one refused alone.' },
      description: 'A batch of 1 to 1,000 contacts.',
    },
  },
};
