import { MailStatus } from '../mail/status.js';
import type { OutboxEventKind } from '../outbox/kinds.js';

/**
 * The event types webhooks deliver (docs/webhooks.md documents each one's data; the OpenAPI
 * document lists them as `webhooks`: api/schemas/webhook-events.ts). A webhook's `events` is a
 * list of these, or null for all. New types may be added; receivers must ignore unknown ones.
 */
export const WEBHOOK_EVENT_TYPES = [
  'mail.received',
  'mail.queued',
  'mail.sent',
  'mail.deferred',
  'mail.bounced',
  'mail.dropped',
  'mail.onhold',
  'mail.opened',
  'mail.clicked',
  'mail.unsubscribed',
  'mail.complained',
  'restriction.created',
  'restriction.lifted',
  'form.submission.created',
  'form.submission.confirmed',
  'consent.event.created',
  'consent.event.confirmed',
  'consent.event.expired',
  'webhook.test',
  'domain.dmarc_report',
  'deliverability.threshold_crossed',
  'deliverability.threshold_recovered',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A mail's status (mails.status, domain/mail/status.ts) as its event type: mail.<its name>. */
const STATUS_TYPES = new Map<number, WebhookEventType>(
  Object.entries(MailStatus).map(([name, code]) => [code, `mail.${name as keyof typeof MailStatus}` as const satisfies WebhookEventType]),
);

const KIND_TYPES: Partial<Record<string, WebhookEventType>> = {
  open: 'mail.opened',
  click: 'mail.clicked',
  unsubscribe: 'mail.unsubscribed',
  complaint: 'mail.complained',
};

/**
 * The event type of an outbox row; undefined for a kind webhooks do not deliver (none today: a
 * kind added to domain/outbox/kinds.ts without a type here is marked done and not delivered).
 */
export function eventTypeOf(kind: OutboxEventKind | string, status: number | null): WebhookEventType | undefined {
  if (kind === 'status') return status === null ? undefined : STATUS_TYPES.get(status);
  if (KIND_TYPES[kind]) return KIND_TYPES[kind];
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(kind) ? (kind as WebhookEventType) : undefined;
}
