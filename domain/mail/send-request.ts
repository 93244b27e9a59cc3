import type { FromSchema } from 'json-schema-to-ts';

/**
 * The body of POST /v1/mails/send: its JSON Schema and the type derived from it, in one place,
 * so the two cannot differ. It lives here, beside acceptSend that takes it, rather than in
 * api/schemas/mails.ts (which re-exports it for the route): domain/ may not import api/, and a
 * request that is a domain function's input is the domain's contract (docs/architecture.md,
 * Types from schemas). `as const` keeps its literal shape for FromSchema; the API validates it
 * with ajv as any other schema.
 */
const email = { type: 'string', format: 'email', maxLength: 320 } as const;
const shortText = <const N extends number>(max: N) => ({ type: 'string', maxLength: max }) as const;

/** The largest send: a POST /v1/mails/send body, and a message submitted over SMTP (smtp/submission/). */
export const SEND_MAX_BYTES = 10 * 1024 * 1024;

/** POST /v1/mails/send (the shape; unknown fields are refused so typos are not silent). */
export const sendBodySchema = {
  type: 'object',
  additionalProperties: false,
  // subject: required unless template_id names a template with one (domain/mail/accept.ts).
  required: ['from', 'to'],
  properties: {
    from: { ...email, description: 'The email_address of a sender of this instance whose domain is verified.' },
    to: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      description: 'Recipients; all share one msg_id, each gets its own mail_id.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['email'],
        properties: {
          email,
          name: shortText(200),
          variables: { type: 'object', description: 'Merge tags for this recipient; win over the message variables.' },
        },
      },
    },
    subject: {
      type: 'string',
      minLength: 1,
      maxLength: 998,
      description: "May contain merge tags {{name}}. Required unless template_id names a template with a subject; given, it wins over the template's.",
    },
    html: { type: 'string', description: 'May contain merge tags; values are HTML-escaped. Not with template_id.' },
    text: { type: 'string', description: 'Not with template_id.' },
    template_id: {
      type: 'integer',
      minimum: 1,
      description:
        "A mail template of this instance: its subject (unless subject is given), html and text alternative are sent, copied at acceptance. " +
        'A draft only with test_mode: true (else 409 template_not_public); unknown or deleted: 404 mail_template_not_found.',
    },
    variables: { type: 'object' },
    reply_to: email,
    headers: {
      type: 'object',
      maxProperties: 50,
      additionalProperties: { type: 'string', maxLength: 998 },
      description: 'Extra headers; cannot replace Message-ID, From, To or List-Unsubscribe.',
    },
    custom_msg_id: shortText(255),
    custom_group_code: shortText(255),
    test_mode: { type: 'boolean', default: false },
    track_opens: { type: 'boolean', default: true },
    track_clicks: { type: 'boolean', default: true },
    purpose_ids: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      items: { type: 'integer', minimum: 1 },
      description:
        'Consent purposes of the send. Required when the sender requires consent (422 missing): each recipient is then sent only if ' +
        'GET /v1/consent-rules/resolve would answer allowed for its address on mail for every purpose, else dropped (status 4). Unknown ids: 422.',
    },
    attachments: {
      type: 'array',
      maxItems: 20,
      items: {
        type: 'object',
        required: ['filename', 'content_type', 'content'],
        additionalProperties: false,
        properties: {
          filename: { type: 'string', minLength: 1, maxLength: 255 },
          content_type: { type: 'string', pattern: '^[\\w.+-]+/[\\w.+-]+$', maxLength: 127 },
          content: { type: 'string', pattern: '^[A-Za-z0-9+/\\r\\n]*={0,2}$', description: 'Base64' },
          content_id: {
            type: 'string',
            minLength: 1,
            maxLength: 255,
            pattern: '^[^<>\\s]+$',
            description: 'Makes it an inline image (or other related part): the html shows it as cid:<content_id>, without angle brackets.',
          },
        },
      },
    },
  },
} as const;

/**
 * The body of POST /v1/mails/send after schema validation: what sendBodySchema describes. The
 * fields with a default stay optional: the API's validator fills them in, but the domain's own
 * senders (confirmation mails, form mails, a template's test send) call acceptSend without them,
 * and acceptSend applies the same defaults.
 */
export type SendRequest = FromSchema<typeof sendBodySchema, { keepDefaultedPropertiesOptional: true }>;
