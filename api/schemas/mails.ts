import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateFilterQuery, nullableDateTime, paginationQuery } from './common.js';

const email: JsonSchema = { type: 'string', format: 'email', maxLength: 320 };
const shortText = (max: number): JsonSchema => ({ type: 'string', maxLength: max });

// The send body's schema is the domain's, with the type derived from it (domain/mail/send-request.ts).
export { SEND_MAX_BYTES, sendBodySchema } from '../../domain/mail/send-request.js';

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
