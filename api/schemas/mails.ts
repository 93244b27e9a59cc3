import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateFilterQuery, nullableDateTime, paginationQuery } from './common.js';

const email: JsonSchema = { type: 'string', format: 'email', maxLength: 320 };
const shortText = (max: number): JsonSchema => ({ type: 'string', maxLength: max });

/** POST /v1/mails/send (the shape; unknown fields are refused so typos are not silent). */
export const sendBodySchema: JsonSchema = {
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
      items: closedObject({
        filename: { type: 'string', minLength: 1, maxLength: 255 },
        content_type: { type: 'string', pattern: '^[\\w.+-]+/[\\w.+-]+$', maxLength: 127 },
        content: { type: 'string', pattern: '^[A-Za-z0-9+/\\r\\n]*={0,2}$', description: 'Base64' },
      }),
    },
  },
};

export const sendAcceptedSchema: JsonSchema = {
  type: 'object',
  required: ['msg_id', 'mails'],
  properties: {
    msg_id: { type: 'string' },
    mails: {
      type: 'array',
      items: {
        type: 'object',
        required: ['mail_id', 'to', 'status'],
        properties: { mail_id: { type: 'string' }, to: { type: 'string' }, status: { type: 'integer' } },
      },
    },
  },
};

export const mailSchema: JsonSchema = closedObject({
  mail_id: { type: 'string' },
  msg_id: { type: ['string', 'null'] },
  to: { type: 'string' },
  subject: { type: 'string' },
  sender: { type: ['string', 'null'] },
  status: { type: ['integer', 'null'], minimum: 1, maximum: 7, description: '1 received, 2 queued, 3 sent, 4 dropped, 5 deferred, 6 bounced, 7 onhold' },
  opens: { type: 'integer' },
  clicks: { type: 'integer' },
  human_opens: {
    type: ['integer', 'null'],
    description:
      'Beyond the spec: the opens no machine rule flagged (docs/tracking.md), what GET /v1/activities/opens counts for this mail with exclude_machine=true. ' +
      'Counted when the event pump judges an open (within a second), so it can trail opens briefly. Null for a mail opened before Cartero counted them.',
  },
  human_clicks: {
    type: ['integer', 'null'],
    description: 'Beyond the spec: the clicks no machine rule flagged, as human_opens is for opens (a click found later to start a burst is taken off).',
  },
  received_at: nullableDateTime,
  queued_at: nullableDateTime,
  sent_at: nullableDateTime,
  schedule_at: { type: 'null', description: 'Always null: scheduled sending is unavailable.' },
  delay: { type: ['number', 'null'], description: 'Seconds from reception to sent_at.' },
  custom_msg_id: { type: ['string', 'null'] },
  custom_group_code: { type: ['string', 'null'] },
});

export const mailLogSchema: JsonSchema = closedObject({
  status: { type: 'integer' },
  created_at: { type: 'string', format: 'date-time' },
  reason: { type: ['string', 'null'], description: 'Why the mail moved, when not an SMTP reply (e.g. accepted, restricted:hard_bounce).' },
  smtp_code: { type: ['integer', 'null'] },
  smtp_enhanced: { type: ['string', 'null'] },
  smtp_reply: { type: ['string', 'null'] },
  attempt: { type: ['integer', 'null'] },
  bounce_reason: {
    type: ['string', 'null'],
    description:
      'Beyond the spec: why the mail bounced, on the row of a move to bounced (and on a delay report\'s note), in the bounce classifier\'s vocabulary ' +
      '(userunknown, hostunknown, mailboxfull, blocked, spamdetected, policyviolation, expired, ...; docs/bounces.md). Null on other rows.',
  },
  bounce_class: {
    type: ['string', 'null'],
    enum: ['hard', 'soft', null],
    description:
      'Beyond the spec: on the row of a move to bounced, whether the bounce was judged hard (the address is restricted at once) ' +
      'or soft (counted toward the soft-bounce threshold). Null on other rows.',
  },
});

/** The common filters of the activity listings (spec: Common filters of the activity listings). */
export const activityFilterQuery = {
  ...paginationQuery,
  ...dateFilterQuery,
  msg_id: shortText(64),
  mail_id: shortText(64),
  sender_id: { type: 'integer', minimum: 1 },
  recipient: { ...shortText(320), description: 'Exact by default; a + must be sent as %2B.' },
  recipient_operator: { type: 'string', enum: ['eq', 'starts_with'], default: 'eq', description: 'Ignored without recipient.' },
  custom_msg_id: shortText(255),
  custom_group_code: shortText(255),
  subject: { ...shortText(998), description: 'Partial, case-insensitive.' },
} satisfies Record<string, JsonSchema>;

export const sentFilterQuery = {
  ...activityFilterQuery,
  status: { type: 'integer', minimum: 1, maximum: 7 },
  opened: { type: 'string', enum: ['all', 'opened', 'unopened'], description: 'opened: with opens; unopened: delivered without opens.' },
} satisfies Record<string, JsonSchema>;
