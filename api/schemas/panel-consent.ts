import { MAX_TERM_BODY_BYTES } from '../../domain/consent/terms.js';
import { CONSENT_CHANNELS, TERM_TYPES } from '../../domain/consent/vocabulary.js';
import type { JsonSchema } from '../../domain/validation.js';
import { resourceId } from './common.js';

/**
 * The panel-only consent operations' bodies (docs/panel.md, Consent): what `cartero purpose
 * create`, `term create`, `term add-version`, `term set-current` and `term activate|deactivate`
 * take as flags. The answers are the public listings' items (purposeSchema, termSchema). The
 * schemas refuse the shapes (422); what only the domain judges (a name blank once trimmed, a
 * document URL that does not parse) is its refusal, answered as a 422 on the same field
 * (api/routes/panel/consent.ts).
 */

// Not blank: at least one character that is not white space (the domain trims names and labels).
const notBlank = '\\S';

export const purposeCreateSchema: JsonSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 255, pattern: notBlank, description: 'Unique in the instance ignoring case and accents.' } },
};

export const termCreateSchema: JsonSchema = {
  type: 'object',
  required: ['name', 'type', 'purpose_ids', 'channels'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255, pattern: notBlank, description: 'Unique in the instance ignoring case and accents.' },
    type: { type: 'string', enum: [...TERM_TYPES] },
    purpose_ids: { type: 'array', minItems: 1, maxItems: 100, items: resourceId, description: 'Purposes of the instance (404 consent_purpose_not_found otherwise); fixed from now on.' },
    channels: { type: 'array', minItems: 1, maxItems: CONSENT_CHANNELS.length, items: { type: 'string', enum: [...CONSENT_CHANNELS] }, description: 'Fixed from now on.' },
  },
};

export const versionCreateSchema: JsonSchema = {
  type: 'object',
  required: ['version', 'body'],
  additionalProperties: false,
  properties: {
    version: { type: 'string', minLength: 1, maxLength: 64, pattern: notBlank, description: 'The label, unique in the term (409 consent_term_version_taken).' },
    body: { type: 'string', minLength: 1, description: `The full legal text, at most ${MAX_TERM_BODY_BYTES} bytes in UTF-8 (413 request_too_large); never changes once published.` },
    document_url: { type: 'string', minLength: 1, maxLength: 2048, description: 'Where the text is published: an http or https URL.' },
  },
};

export const currentVersionSchema: JsonSchema = {
  type: 'object',
  required: ['version'],
  additionalProperties: false,
  properties: { version: { type: 'string', minLength: 1, maxLength: 64, description: 'The label of a published version of the term (404 consent_term_version_not_found).' } },
};
