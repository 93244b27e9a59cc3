import type { JsonSchema } from '../validation.js';
import { FORM_CONSENT_CHANNELS, FORM_ITEM_TYPES, FORM_KINDS, FORM_TYPES } from './read.js';

/*
 * A form's definition as JSON Schema: what `cartero form create|update --file` reads (the whole
 * definition) and the settings the API shows. Here, not in api/, because the CLI checks a
 * definition file with it and the API's form schemas (api/schemas/forms.ts) reuse its parts.
 */

const id: JsonSchema = { type: 'integer', minimum: 1, maximum: 9007199254740991 };
export const formChannelSchema: JsonSchema = { type: 'string', enum: [...FORM_CONSENT_CHANNELS] };

const designSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    primary_color: { type: 'string', pattern: '^#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?$' },
    secondary_color: { type: 'string', pattern: '^#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?$' },
    logo_url: { type: 'string', maxLength: 2048, pattern: '^https://' },
    custom_css: { type: 'string', maxLength: 20000 },
  },
};

/** Spec: Form.settings (free-form as the spec says; these are the keys the hosted page reads). */
export const settingsSchema: JsonSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', maxLength: 255 },
    header_text: { type: 'string', maxLength: 5000 },
    footer_text: { type: 'string', maxLength: 5000 },
    design: designSchema,
  },
};

/** The file of `cartero form create|update --file` (panel-only): the whole definition. */
export const formDefinitionSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'kind', 'type', 'items'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    kind: { type: 'string', enum: [...FORM_KINDS] },
    type: { type: 'string', enum: [...FORM_TYPES] },
    dataset_id: { type: ['integer', 'null'], minimum: 1 },
    requires_confirmation: { type: 'boolean' },
    auto_reply_sender_id: { type: ['integer', 'null'], minimum: 1 },
    auto_reply: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        subject: { type: 'string', minLength: 1, maxLength: 254 },
        html: { type: 'string', minLength: 1 },
        text: { type: 'string', minLength: 1 },
        template_id: id,
      },
    },
    team_notice_emails: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 320 } },
    settings: settingsSchema,
    is_default: { type: 'boolean' },
    is_active: { type: 'boolean' },
    items: {
      type: 'array',
      maxItems: 200,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type'],
        properties: {
          id: { ...id, description: 'update: an item of this form, kept with its id.' },
          type: { type: 'string', enum: [...FORM_ITEM_TYPES] },
          field_key: { type: 'string', maxLength: 63 },
          term_id: id,
          channel: formChannelSchema,
          label: { type: 'string', minLength: 1, maxLength: 1000 },
          text: { type: 'string', minLength: 1, maxLength: 10000 },
          required: { type: 'boolean' },
        },
        description: 'field items need field_key, consent items term_id (channel defaults to mail when the term has it), text items text (422 otherwise).',
      },
    },
  },
};
