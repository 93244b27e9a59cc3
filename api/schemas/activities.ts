import type { JsonSchema } from '../../domain/validation.js';
import { dateTime, nullableDateTime } from './common.js';
import { activityFilterQuery } from './mails.js';

/**
 * Query and row schemas of the activity listings (spec: Click rows, Open rows, Unopened row,
 * Common filters). Row schemas list the fields in the spec's order; the listings return them in
 * that order too.
 */

const GROUP_BY = ['none', 'mail_id', 'msg_id'] as const;

/** The query-string schema of the opens and clicks listings and exports: the common filters, group_by and the machine-made exclusion. */
export const eventActivityQuerySchema = {
  ...activityFilterQuery,
  group_by: {
    type: 'string',
    enum: [...GROUP_BY],
    default: 'none',
    description: 'none: one row per event; mail_id: one row per recipient; msg_id: one row per message.',
  },
  exclude_machine: {
    type: 'boolean',
    default: false,
    description:
      'true: leave out events flagged as machine-made (privacy proxies, link scanners, prefetches, HEAD requests, click bursts, ' +
      'no user agent; see docs/tracking.md) before counting and grouping. Default false: every recorded event is listed.',
  },
} satisfies Record<string, JsonSchema>;

/** The unopened listing's and export's query string: the common filters and human. */
export const unopenedQuerySchema = {
  ...activityFilterQuery,
  human: {
    type: 'boolean',
    default: false,
    description:
      'true: delivered mails with no open made by a person: a mail opened only by machines (privacy proxies, scanners; docs/tracking.md) ' +
      'is listed. Default false: no open at all.',
  },
} satisfies Record<string, JsonSchema>;

const text: JsonSchema = { type: 'string' };
const nullableText: JsonSchema = { type: ['string', 'null'] };
const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });

/** An object schema whose properties, all required, are in the order given. */
function row(properties: Record<string, JsonSchema>, description: string): JsonSchema {
  return { type: 'object', description, additionalProperties: false, required: Object.keys(properties), properties };
}

const mailAttributes = {
  mail_id: text,
  msg_id: nullableText,
  to: { type: 'string', description: 'Recipient address (lower-case).' },
  sender: { type: 'string', description: "The sender's address." },
};
const custom = { custom_msg_id: nullableText, custom_group_code: nullableText };
const messageAttributes = {
  msg_id: text,
  sender: { type: 'string', description: "The sender's address." },
  subject: { type: ['string', 'null'], description: "The message's subject; null when its recipients' subjects differ (merge tags)." },
};
const rcptCount = count('Recipients of the message, whether they opened or clicked or not.');
// Cartero's additions about machine-made events (docs/tracking.md), after the spec's fields.
const machine: JsonSchema = {
  type: ['string', 'null'],
  description: 'Why the event was judged machine-made (privacy_proxy, image_scanner, link_scanner, prefetch, head_request, click_burst, no_user_agent; docs/tracking.md), or null: a person.',
};
const human = (what: string, exclude: string): JsonSchema => count(`${what} not flagged as machine-made: what the same query counts with exclude_machine=true${exclude}.`);

export const openRowSchemas = {
  none: row(
    { ...mailAttributes, opened_at: dateTime, sent_at: nullableDateTime, ...custom, machine },
    'group_by=none: one row per open.',
  ),
  mail_id: row(
    {
      ...mailAttributes,
      open_count: count('Opens of this recipient in the range.'),
      first_opened_at: dateTime,
      last_opened_at: dateTime,
      sent_at: nullableDateTime,
      ...custom,
      human_open_count: human('Opens of this recipient', ' (open_count)'),
    },
    'group_by=mail_id: one row per recipient with an open in the range.',
  ),
  msg_id: row(
    {
      ...messageAttributes,
      open_count: count('Opens of the message in the range.'),
      recipients_opened: count('Distinct recipients with at least one open in the range.'),
      rcpt_count: rcptCount,
      first_opened_at: dateTime,
      last_opened_at: dateTime,
      ...custom,
      human_open_count: human('Opens of the message', ' (open_count)'),
      recipients_opened_human: human('Distinct recipients with an open', ' (recipients_opened)'),
    },
    'group_by=msg_id: one row per message with an open in the range.',
  ),
} satisfies Record<(typeof GROUP_BY)[number], JsonSchema>;

export const clickRowSchemas = {
  none: row(
    {
      ...mailAttributes,
      url_redirect: { type: ['string', 'null'], description: 'The clicked URL.' },
      clicked_at: dateTime,
      sent_at: nullableDateTime,
      ...custom,
      machine,
    },
    'group_by=none: one row per click.',
  ),
  mail_id: row(
    {
      ...mailAttributes,
      click_count: count('Clicks of this recipient in the range.'),
      links_clicked: count('Distinct links this recipient clicked in the range.'),
      first_clicked_at: dateTime,
      last_clicked_at: dateTime,
      sent_at: nullableDateTime,
      ...custom,
      human_click_count: human('Clicks of this recipient', ' (click_count)'),
    },
    'group_by=mail_id: one row per recipient with a click in the range.',
  ),
  msg_id: row(
    {
      ...messageAttributes,
      click_count: count('Clicks of the message in the range.'),
      recipients_clicked: count('Distinct recipients with at least one click in the range.'),
      links_clicked: count('Distinct links per recipient, summed over the recipients.'),
      rcpt_count: rcptCount,
      first_clicked_at: dateTime,
      last_clicked_at: dateTime,
      ...custom,
      human_click_count: human('Clicks of the message', ' (click_count)'),
      recipients_clicked_human: human('Distinct recipients with a click', ' (recipients_clicked)'),
    },
    'group_by=msg_id: one row per message with a click in the range.',
  ),
} satisfies Record<(typeof GROUP_BY)[number], JsonSchema>;

export const unopenedRowSchema = row(
  {
    mail_id: text,
    msg_id: nullableText,
    to: { type: 'string', description: 'Recipient address (lower-case).' },
    subject: text,
    sender: nullableText,
    received_at: nullableDateTime,
    sent_at: nullableDateTime,
    ...custom,
  },
  'A delivered mail with no recorded open.',
);

/** The row of a listing whose shape depends on group_by. */
export function byGroup(rows: Record<string, JsonSchema>): JsonSchema {
  return { oneOf: Object.values(rows) };
}
