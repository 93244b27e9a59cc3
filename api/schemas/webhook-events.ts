import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/webhooks/event-types.js';
import type { JsonSchema } from '../../domain/validation.js';
import { dateTime, nullableDateTime } from './common.js';
import { restrictionBounceFields } from './restrictions.js';

/**
 * What each event type's delivery carries (docs/webhooks.md says the same in prose), as the
 * OpenAPI 3.1 `webhooks` of the document (api/openapi.ts): one POST per type, with the headers
 * and the body `{type, timestamp, data}`. Fields may be added to `data`; receivers ignore unknown ones.
 */
const str = (description: string): JsonSchema => ({ type: ['string', 'null'], description });
const int = (description: string): JsonSchema => ({ type: ['integer', 'null'], description });

const machineFlag = str(
  'Why the event was judged machine-made (privacy_proxy, image_scanner, link_scanner, prefetch, head_request, click_burst, no_user_agent; ' +
    'docs/tracking.md), or null: a person. Judged before delivery; a later burst re-flag of a click is not sent again.',
);
const mailData: Record<string, JsonSchema> = {
  mail_id: { type: 'string', description: 'The mail (one recipient of a send).' },
  msg_id: str('The send it belongs to (shared by its recipients).'),
  custom_msg_id: str('The custom id given at send time.'),
  custom_group_code: str('The custom group code given at send time.'),
  recipient: str('The recipient address.'),
  sender_id: int('The sender.'),
  sender: str("The sender's address."),
  subject: str('The subject.'),
};

const statusData: Record<string, JsonSchema> = {
  ...mailData,
  status: { type: 'integer', description: '1 received, 2 queued, 3 sent, 4 dropped, 5 deferred, 6 bounced, 7 onhold.' },
  reason: str("Why (the mail log's reason, e.g. restricted, handed_to_smtp)."),
  smtp_code: int('The SMTP reply code, when the move came from one.'),
  smtp_enhanced: str('The enhanced status code (RFC 3463).'),
  smtp_reply: str('The SMTP reply text.'),
  attempt: int('The SMTP attempt the move came from.'),
};

const DATA: Record<WebhookEventType, { summary: string; properties: Record<string, JsonSchema> }> = {
  'mail.received': { summary: 'A mail was accepted (status 1).', properties: statusData },
  'mail.queued': { summary: 'A mail was handed to SMTP (status 2).', properties: statusData },
  'mail.sent': { summary: 'The receiving server accepted the mail (status 3).', properties: statusData },
  'mail.deferred': { summary: 'A temporary failure; the mail will be retried (status 5).', properties: statusData },
  'mail.bounced': {
    summary: 'The mail bounced (status 6).',
    properties: {
      ...statusData,
      bounce_class: str('hard (the address is restricted at once) or soft (counted toward the soft-bounce threshold).'),
      bounce_reason: str('Why it bounced, in the bounce classifier\'s vocabulary (userunknown, hostunknown, mailboxfull, filtered, expired, ...; docs/bounces.md).'),
    },
  },
  'mail.dropped': { summary: 'The mail was refused before sending (status 4).', properties: statusData },
  'mail.onhold': { summary: 'The mail is held (status 7).', properties: statusData },
  'mail.opened': {
    summary: 'The tracking pixel was loaded.',
    properties: { ...mailData, user_agent: str('Of the client.'), ip: str('Of the client.'), machine: machineFlag },
  },
  'mail.clicked': {
    summary: 'A tracked link was followed.',
    properties: { ...mailData, url: str('The link.'), user_agent: str('Of the client.'), ip: str('Of the client.'), machine: machineFlag },
  },
  'mail.unsubscribed': { summary: 'The recipient unsubscribed through this mail.', properties: mailData },
  'mail.complained': { summary: 'A feedback-loop complaint about this mail.', properties: { ...mailData, feedback_type: str('ARF Feedback-Type, e.g. abuse.') } },
  'restriction.created': {
    summary: 'An address was put under restriction.',
    properties: {
      restriction_id: { type: 'integer' },
      recipient: str('The address.'),
      reason: str('unsubscribe, soft_bounce, hard_bounce...'),
      restricted_at: nullableDateTime,
      ...restrictionBounceFields,
    },
  },
  'restriction.lifted': {
    summary: 'A restriction was lifted.',
    properties: {
      restriction_id: { type: 'integer' },
      recipient: str('The address.'),
      reason: str('unsubscribe, soft_bounce, hard_bounce...'),
      restricted_at: nullableDateTime,
      lifted_at: dateTime,
      ...restrictionBounceFields,
    },
  },
  'form.submission.created': {
    summary: 'A form was submitted.',
    properties: { submission_id: { type: 'integer' }, form_id: int('The form.') },
  },
  'form.submission.confirmed': {
    summary: 'A form submission was confirmed (double opt-in).',
    properties: { submission_id: { type: 'integer' }, form_id: int('The form.') },
  },
  'consent.event.created': {
    summary: 'A consent event was recorded.',
    properties: consentData('pending (double opt-in) or confirmed.'),
  },
  'consent.event.confirmed': { summary: 'A double opt-in consent event was confirmed.', properties: consentData('confirmed.') },
  'consent.event.expired': { summary: 'A double opt-in consent event expired unconfirmed.', properties: consentData('expired.') },
  'webhook.test': {
    summary: 'A test event (POST /v1/webhooks/{id}/test).',
    properties: { webhook_id: { type: 'integer' }, message: { type: 'string' } },
  },
  'domain.dmarc_report': {
    summary: 'A DMARC aggregate report about one of the domains was received and stored (once per report: a resent one is not an event again).',
    properties: {
      domain: str('The domain the report was filed under (its return-path host received it); GET /v1/domains/{domain_name}/dmarc-reports lists it.'),
      report_id: str("The reporter's id of the report."),
      org_name: str('The reporting organization.'),
      message_count: int("Messages reported: the sum of the records' counts."),
      dmarc_fail_count: int('Of them, those that failed DMARC (neither DKIM nor SPF passed aligned).'),
    },
  },
  'deliverability.threshold_crossed': {
    summary:
      "A mailbox provider's complaint or hard-bounce rate for one sending domain reached a worse status today (ok → warning → critical, " +
      'or ok → critical at once); once per provider, domain, metric, status and local day (docs/deliverability.md, Alerts).',
    properties: thresholdData('The status reached: warning or critical.', 'The threshold reached (0.001 or 0.003 for complaints, 0.02 or 0.05 for bounces).'),
  },
  'deliverability.threshold_recovered': {
    summary:
      "A mailbox provider's complaint or hard-bounce rate for one sending domain, after a threshold_crossed today, fell back to a better status " +
      '(critical → warning or ok, warning → ok) (docs/deliverability.md, Alerts).',
    properties: thresholdData('The status now: warning or ok.', 'The threshold the rate fell back below: the critical one for a recovery to warning, the warning one for a recovery to ok.'),
  },
};

/** The data of both deliverability events: the day's figures the status was judged on. */
function thresholdData(status: string, threshold: string): Record<string, JsonSchema> {
  return {
    provider: str('The mailbox provider (GET /v1/deliverability/providers lists them).'),
    domain: str("The sending domain (the part of the sender's address after its @)."),
    metric: { type: ['string', 'null'], enum: ['complaint_rate', 'bounce_rate', null], description: 'complaint_rate (complaints ÷ delivered) or bounce_rate (hard bounces ÷ delivered and bounced).' },
    rate: { type: ['number', 'null'], description: 'The rate when judged, as a fraction (0.004 is 0.4 %), six decimals.' },
    threshold: { type: ['number', 'null'], description: threshold },
    status: { type: ['string', 'null'], enum: ['ok', 'warning', 'critical', null], description: status },
    date: str("The local date of the figures (YYYY-MM-DD, in the instance's zone, else UTC)."),
    delivered: int('Mails delivered to the provider from the domain that day.'),
    volume: int("The rate's divisor: delivered for complaint_rate, delivered plus bounced (hard and soft) for bounce_rate; at least DELIVERABILITY_ALERT_MIN_DELIVERED."),
    count: int('Complaints (complaint_rate) or hard bounces (bounce_rate) that day.'),
  };
}

function consentData(status: string): Record<string, JsonSchema> {
  return {
    consent_event_id: { type: 'integer', description: 'As GET /v1/consent-events lists it.' },
    term_id: int('The term.'),
    term_version_id: int('The term version consented to.'),
    method: str('single_opt_in or double_opt_in.'),
    source: str('form, api, import or system.'),
    submission_id: int('The form submission, when from a form.'),
    form_id: int('The form, when from a form.'),
    status: { type: 'string', description: status },
  };
}

const header = (description: string) => ({ required: true, description, schema: { type: 'string' } });

/** The OpenAPI 3.1 `webhooks` object: one entry per event type. */
export function webhookEventsOpenApi(): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/\./g, '_')}`,
          summary: DATA[type].summary,
          tags: ['Webhooks'],
          parameters: [
            { in: 'header', name: 'webhook-id', ...header('msg_<event id>: the same on every attempt, redelivery and replay of this event.') },
            { in: 'header', name: 'webhook-timestamp', ...header('Unix seconds of this attempt.') },
            {
              in: 'header',
              name: 'webhook-signature',
              ...header('v1,<base64 HMAC-SHA256 of "id.timestamp.body">; two, space-separated, the new secret first, for 24 h after a rotation.'),
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'data'],
                  properties: {
                    type: { const: type },
                    timestamp: { ...dateTime, description: 'When the event occurred.' },
                    data: { type: 'object', properties: DATA[type].properties },
                  },
                },
              },
            },
          },
          responses: { '200': { description: 'Any 2xx: delivered. Anything else, or no answer within WEBHOOK_TIMEOUT_SECONDS: retried.' } },
        },
      },
    ]),
  );
}
