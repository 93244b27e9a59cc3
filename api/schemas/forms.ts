import { MAX_PROOF_USER_AGENT } from '../../domain/consent/events.js';
import { FORM_ITEM_TYPES, FORM_KINDS, FORM_TYPES } from '../../domain/forms/read.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime, resourceId as id } from './common.js';
import { formChannelSchema as channel, settingsSchema } from '../../domain/forms/definition-schema.js';



/** An entry of a form's items[] as GET /v1/forms/{id} shows it. */
export const formItemSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'type'],
  properties: {
    id: { type: 'integer', description: 'The item_id a submission sends.' },
    type: { type: 'string', enum: [...FORM_ITEM_TYPES], description: 'separator and text items are shown, never sent.' },
    field_key: { type: 'string', description: 'field: the catalog field collected.' },
    field_type: { type: 'string', description: 'field: its catalog type (text, email, phone, number, date, boolean, select).' },
    options: { type: ['array', 'null'], items: { type: 'string' }, description: 'field: a select field’s options, else null.' },
    term_id: { type: 'integer', description: 'consent: the term accepted.' },
    term_version_id: { type: ['integer', 'null'], description: 'consent: the term’s current version, which a submission must send (null: the term has none, so no submission can pass).' },
    channel: { ...channel, description: 'consent: the channel the consent is given on; identified by the form’s email (mail) or phone (sms, wsp) field.' },
    label: { type: ['string', 'null'] },
    required: { type: 'boolean' },
    text: { type: 'string', description: 'text: the block’s text.' },
  },
};

/** Spec: Form. */
export const formSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  name: { type: 'string', description: 'Unique ignoring case and accents.' },
  kind: { type: 'string', enum: [...FORM_KINDS] },
  type: { type: 'string', enum: [...FORM_TYPES] },
  dataset_id: { type: ['integer', 'null'] },
  public_token: { type: 'string', description: 'Names the form’s hosted page, /f/{public_token}.' },
  is_default: { type: 'boolean' },
  is_active: { type: 'boolean', description: 'A deactivated form answers submissions 404 form_not_found.' },
  requires_confirmation: { type: 'boolean' },
  auto_reply_sender_id: { type: ['integer', 'null'], description: 'Sender of the auto-reply and of the confirmation mail.' },
  settings: settingsSchema,
  created_at: dateTime,
  updated_at: dateTime,
  items: { type: 'array', items: formItemSchema, description: 'In display order.' },
});

/** POST /v1/forms/{id}/submissions. */
export const submissionBodySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      maxItems: 500,
      description: 'One entry per field and per consent item of the form (not separators or text blocks).',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['item_id'],
        properties: {
          item_id: { ...id, description: 'The id from items[] of GET /v1/forms/{id}.' },
          value: { description: 'The answer: null for an empty optional field; a consent true if checked, false if not.' },
          term_version_id: { ...id, description: 'Consent items: the term version shown (GET /v1/forms/{id} gives the current one).' },
        },
      },
    },
    ip_address: { type: 'string', maxLength: 45, description: 'The contact’s address as the caller observed it; stored as declared data.' },
    user_agent: { type: 'string', maxLength: MAX_PROOF_USER_AGENT, description: 'The contact’s client as the caller observed it; stored as declared data.' },
  },
};

export const submissionResultSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  status: { type: 'string', enum: ['confirmed', 'pending'], description: 'pending: the confirmation mail is on its way and the consents are not in force until confirmed.' },
});
