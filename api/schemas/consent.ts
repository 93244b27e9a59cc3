import { MAX_EVIDENCE_BYTES, MAX_PROOF_USER_AGENT } from '../../domain/consent/events.js';
import {
  CONSENT_ACTIONS,
  CONSENT_CHANNELS,
  CONSENT_METHODS,
  CONTACT_TYPES,
  EVENT_SOURCES,
  EVENT_STATUSES,
  MAX_CONTACT_LENGTH,
  TERM_TYPES,
  VERDICTS,
} from '../../domain/consent/vocabulary.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime, nullableDateTime } from './common.js';

const id: JsonSchema = { type: 'integer', minimum: 1, maximum: 9007199254740991 };
const channel: JsonSchema = { type: 'string', enum: [...CONSENT_CHANNELS] };
const contactType: JsonSchema = { type: 'string', enum: [...CONTACT_TYPES] };

/** A consent purpose (the spec leaves its fields open: these three). */
export const purposeSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  name: { type: 'string', description: 'Unique in the instance ignoring case and accents.' },
  created_at: dateTime,
});

const versionSchema: JsonSchema = closedObject({
  version: { type: 'string', description: 'Version label, unique in the term.' },
  body: { type: 'string', description: 'The full legal text, exactly as published; never changes.' },
  document_url: { type: ['string', 'null'] },
  is_current: { type: 'boolean', description: 'At most one version per term; the one a new consent freezes. Publishing does not make a version current.' },
  published_at: nullableDateTime,
});

/** Spec: Consent term, with its versions in publishing order. */
export const termSchema: JsonSchema = closedObject({
  id: { type: 'integer', description: 'The term_id sent when registering consent.' },
  name: { type: 'string' },
  type: { type: 'string', enum: [...TERM_TYPES] },
  purpose_ids: { type: 'array', items: { type: 'integer' }, minItems: 1, description: 'Fixed when the term is created.' },
  channels: { type: 'array', items: channel, minItems: 1 },
  is_active: { type: 'boolean', description: 'An inactive term cannot receive new consents.' },
  created_at: dateTime,
  updated_at: dateTime,
  versions: { type: 'array', items: versionSchema },
});

const ruleSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  channel,
  contact_type: contactType,
  contact: { type: 'string', description: 'Stored form: email addresses lowercased, other identifiers as sent.' },
  purpose_id: { type: 'integer' },
  action: { type: 'string', enum: [...CONSENT_ACTIONS], description: 'A revocation is a deny rule; a deny wins over any allow.' },
  created_at: dateTime,
});

/** Spec: Consent event, with the rules it declared. */
export const eventSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  term_id: { type: 'integer' },
  term_version_id: { type: 'integer', description: 'The version current when the event was registered; frozen.' },
  status: { type: 'string', enum: [...EVENT_STATUSES], description: 'pending (double opt-in not yet confirmed) and expired authorize nothing.' },
  method: { type: 'string', enum: [...CONSENT_METHODS] },
  source: { type: 'string', enum: [...EVENT_SOURCES] },
  submission_id: { type: ['integer', 'null'], description: 'Only when source is form.' },
  form_id: { type: ['integer', 'null'], description: 'Only when source is form.' },
  form_name: { type: ['string', 'null'], description: 'Only when source is form.' },
  confirmed_at: { ...nullableDateTime, description: 'When a double opt-in was confirmed; null for single opt-in (in force from created_at).' },
  expired_at: nullableDateTime,
  created_at: dateTime,
  rules: { type: 'array', items: ruleSchema },
});

/** POST /v1/consent-events. */
export const eventCreateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['term_id', 'method', 'rules'],
  properties: {
    term_id: { ...id, description: 'An active term of this instance with a current version (frozen in the event).' },
    method: { type: 'string', enum: [...CONSENT_METHODS], description: 'single_opt_in: in force at once. double_opt_in: pending, authorizes nothing until confirmed.' },
    rules: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      description: 'One rule per channel and purpose (409 consent_duplicate_rule); channel and purpose among the term’s (422).',
      items: closedObject({
        channel,
        contact_type: { ...contactType, description: 'email_address (mail), phone_number in E.164 (sms, wsp, call), uniquecode (any channel).' },
        contact: { type: 'string', minLength: 1, maxLength: MAX_CONTACT_LENGTH, description: 'Email addresses are stored lowercased; others as sent.' },
        purpose_id: id,
        action: { type: 'string', enum: [...CONSENT_ACTIONS] },
      }),
    },
    ip_address: {
      type: 'string',
      maxLength: 45,
      description: 'The IPv4 or IPv6 address the person acted from, as the caller observed it; stored as declared proof (422 value_error.ip_address otherwise).',
    },
    user_agent: { type: 'string', maxLength: MAX_PROOF_USER_AGENT, description: 'The person’s client, as the caller observed it; stored as declared proof.' },
    evidence: {
      type: 'object',
      description: `Free JSON object kept as declared proof (the form shown, a checkbox label, a screenshot URL...); at most ${MAX_EVIDENCE_BYTES} bytes as compact JSON.`,
    },
  },
};

/** GET /v1/consent-rules/resolve's answer. */
export const resolveSchema: JsonSchema = closedObject({
  data: {
    type: 'array',
    items: closedObject({
      contact: { type: 'string', description: 'As compared: email addresses lowercased.' },
      contact_type: contactType,
      channel,
      purpose_id: { type: 'integer' },
      verdict: { type: 'string', enum: [...VERDICTS] },
      event_ids: { type: 'array', items: { type: 'integer' }, description: 'The events the verdict rests on, newest first (the denying or the allowing ones); empty for no_consent.' },
    }),
  },
});

const nullableText: JsonSchema = { type: ['string', 'null'] };

/** GET /v1/consent-events/proof's document (domain/consent/proof.ts). */
export const proofSchema: JsonSchema = closedObject({
  contact: { type: 'string' },
  instance: { type: 'string', description: 'The instance slug.' },
  generated_at: dateTime,
  events: {
    type: 'array',
    description: 'Every event with a rule for the contact, oldest first.',
    items: {
      type: 'object',
      required: [...(eventSchema.required as string[]), 'declared', 'confirmation'],
      additionalProperties: false,
      properties: {
        ...(eventSchema.properties as Record<string, JsonSchema>),
        declared: {
          type: 'object',
          required: ['ip_address', 'user_agent', 'evidence'],
          additionalProperties: false,
          properties: { ip_address: nullableText, user_agent: nullableText, evidence: { type: ['object', 'null'] } },
        },
        confirmation: {
          type: ['object', 'null'],
          required: ['confirmed_at', 'ip_address', 'user_agent'],
          additionalProperties: false,
          properties: { confirmed_at: dateTime, ip_address: nullableText, user_agent: nullableText },
        },
      },
    },
  },
  terms: {
    type: 'array',
    items: closedObject({
      id: { type: 'integer' },
      name: { type: 'string' },
      type: { type: 'string', enum: [...TERM_TYPES] },
      purpose_ids: { type: 'array', items: { type: 'integer' } },
      channels: { type: 'array', items: channel },
    }),
  },
  term_versions: {
    type: 'array',
    description: 'Each version an event froze, once, with its exact text and that text’s SHA-256 (hex, of its UTF-8 bytes).',
    items: closedObject({
      id: { type: 'integer', description: 'The events’ term_version_id.' },
      term_id: { type: 'integer' },
      version: { type: 'string' },
      body: { type: 'string' },
      body_sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      document_url: nullableText,
      published_at: dateTime,
    }),
  },
  purposes: { type: 'array', items: purposeSchema },
});
