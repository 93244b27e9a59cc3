import { DATASET_CHANNELS } from '../../domain/datasets/declaration.js';
import type { JsonSchema } from '../validation.js';
import { dateTime } from './common.js';

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
export const datasetSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: Object.keys(summaryProperties),
  properties: summaryProperties,
};

/** GET /v1/datasets/{id}: the listing's fields plus the identifier and the column declaration. */
export const datasetDetailSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(summaryProperties), 'identity_field', 'columns'],
  properties: {
    ...summaryProperties,
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
  },
};
