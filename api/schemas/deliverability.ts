import type { JsonSchema } from '../../domain/validation.js';
import { DASHBOARD_MAX_DAYS } from '../../domain/panel/dashboard-range.js';
import { PROVIDER_IDS } from '../../engines/providers/table.js';
import { STATUSES, THRESHOLDS } from '../../engines/providers/thresholds.js';
import { dashboardQuery } from './dashboard.js';

/** GET /v1/deliverability/providers and /providers/{provider}/daily (docs/deliverability.md). */

const pct = (rate: number) => `${+(rate * 100).toFixed(2)} %`;

export const deliverabilityQuery = {
  ...dashboardQuery,
  start_date: { ...dashboardQuery.start_date, description: `Local date YYYY-MM-DD in tz (inclusive); default end_date minus 29 days. At most ${DASHBOARD_MAX_DAYS} days in all.` },
  domain: {
    type: 'string',
    minLength: 1,
    maxLength: 253,
    description: "Only the mails sent from this sending domain (the part after the sender address's @); default all.",
  },
} satisfies Record<string, JsonSchema>;

export const providerParam = { provider: { type: 'string', enum: [...PROVIDER_IDS], description: 'A mailbox provider id' } } satisfies Record<string, JsonSchema>;

const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
const rate = (description: string): JsonSchema => ({ type: ['number', 'null'], minimum: 0, maximum: 1, description });
const status = (description: string): JsonSchema => ({ type: 'string', enum: [...STATUSES], description });

const FIGURES: Record<string, JsonSchema> = {
  sent: count('Mails accepted in the range to this provider, whatever became of them: rows of GET /v1/activities/sent.'),
  delivered: count('Of those, mails now at status 3 (sent): GET /v1/activities/sent with status=3.'),
  deferred: count('Of those, mails now at status 5 (deferred, to be retried): GET /v1/activities/sent with status=5.'),
  bounced_hard: count('Of those, mails now at status 6 judged hard bounces.'),
  bounced_soft: count('Of those, mails now at status 6 judged soft bounces.'),
  complaints: count('Complaints (feedback-loop reports) recorded in the range about mails to this provider: rows of GET /v1/mail-complaints.'),
  unsubscribed: count("Unsubscribes made in the range through mails to this provider (the mails' unsubscribe links, RFC 8058 one-click included)."),
  opened: count('Opens in the range, machine-made ones included: total_items of GET /v1/activities/opens.'),
  opened_human: count('Opens in the range not flagged as machine-made: GET /v1/activities/opens with exclude_machine=true.'),
  complaint_rate: rate('complaints ÷ delivered; null when nothing was delivered.'),
  bounce_rate: rate('bounced_hard ÷ (delivered + bounced_hard + bounced_soft): hard bounces among the mails the provider answered; null when none.'),
  complaint_status: status(
    `ok below ${pct(THRESHOLDS.complaint_rate.warning)}, warning from ${pct(THRESHOLDS.complaint_rate.warning)}, critical from ` +
      `${pct(THRESHOLDS.complaint_rate.critical)} (the thresholds Google and Yahoo publish for bulk senders); no_data when nothing was ` +
      'delivered, or for a provider that sends no per-message complaint reports (Gmail, Google Workspace...) while none arrived: ' +
      'its 0 means unknown, not 0 %.',
  ),
  bounce_status: status(
    `ok below ${pct(THRESHOLDS.bounce_rate.warning)}, warning from ${pct(THRESHOLDS.bounce_rate.warning)}, critical from ` +
      `${pct(THRESHOLDS.bounce_rate.critical)} of hard bounces (Amazon SES reviews a sender at 5 %, and SES, SendGrid and Mailgun ask ` +
      'for less than 2 %); no_data when the provider answered no mail.',
  ),
};

const figures = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(extra), ...Object.keys(FIGURES)],
  properties: { ...extra, ...FIGURES },
});

const rangeFields: Record<string, JsonSchema> = {
  start_date: { type: 'string', format: 'date', description: 'First local day of the range' },
  end_date: { type: 'string', format: 'date', description: 'Last local day of the range (inclusive)' },
  tz: { type: 'string', description: 'The zone of the days' },
  domain: { type: ['string', 'null'], description: 'The sending domain asked for, or null for all' },
};

export const providersSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(rangeFields), 'data'],
  properties: {
    ...rangeFields,
    data: {
      type: 'array',
      description: 'One row per provider with any mail or event in the range, most mails first.',
      items: figures({ provider: { type: 'string', enum: [...PROVIDER_IDS], description: 'The mailbox provider' } }),
    },
  },
};

export const providerDailySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(rangeFields), 'provider', 'days'],
  properties: {
    ...rangeFields,
    provider: { type: 'string', enum: [...PROVIDER_IDS], description: 'The mailbox provider' },
    days: {
      type: 'array',
      description: 'Every local day of the range, oldest first (a day without activity is zeros, its rates null).',
      items: figures({ date: { type: 'string', format: 'date', description: 'The local day' } }),
    },
  },
};
