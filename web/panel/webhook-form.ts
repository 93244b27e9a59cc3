import type * as api from './api.js';
import { field, h } from './dom.js';

/** The fields a webhook is made of, shared by the create form (webhooks.ts) and the edit form (webhook.ts). */

/** Every event type the service delivers (domain/webhooks/event-types.ts; the API refuses any other with a 422). */
export const EVENT_TYPES: Array<NonNullable<api.Webhook['events']>[number]> = [
  'mail.received', 'mail.queued', 'mail.sent', 'mail.deferred', 'mail.bounced', 'mail.dropped', 'mail.onhold', 'mail.opened',
  'mail.clicked', 'mail.unsubscribed', 'mail.complained', 'restriction.created', 'restriction.lifted', 'form.submission.created',
  'form.submission.confirmed', 'consent.event.created', 'consent.event.confirmed', 'consent.event.expired', 'webhook.test',
  'domain.dmarc_report', 'deliverability.threshold_crossed', 'deliverability.threshold_recovered',
];

export interface WebhookFields {
  /** The labelled controls, in order. */
  nodes: Node[];
  /** What they hold, as the API takes it: no event ticked is every event (null). */
  value(): api.WebhookInput;
}

/** Name, URL and the event types (checkboxes in a fieldset), filled from `w` when editing. */
export function webhookFields(prefix: string, w?: api.Webhook): WebhookFields {
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '255', autocomplete: 'off', value: w?.name ?? '' });
  const url = h('input', { type: 'url', name: 'url', required: true, maxlength: '2048', autocomplete: 'off', class: 'wide', value: w?.url ?? '', placeholder: 'https://example.com/hooks/cartero' });
  const boxes = EVENT_TYPES.map((type) =>
    h('input', { type: 'checkbox', name: 'events', value: type, id: `${prefix}-${type.replace(/\./g, '-')}`, checked: w?.events?.includes(type) ?? false }),
  );
  const events = h(
    'fieldset',
    { class: 'scopes events', 'aria-describedby': `${prefix}-events-help` },
    h('legend', {}, 'Event types'),
    h('p', { id: `${prefix}-events-help`, class: 'help span' }, 'None ticked: every event type, new ones included. A test event is always delivered, whatever is ticked.'),
    ...boxes.map((b) => h('div', { class: 'check' }, b, h('label', { for: b.id }, b.value))),
  );
  return {
    nodes: [field('Name', name), field('Receiver URL', url), events],
    value: () => {
      const ticked = boxes.filter((b) => b.checked).map((b) => b.value);
      return { name: name.value.trim(), url: url.value.trim(), events: ticked.length ? ticked : null };
    },
  };
}

/** "every event type", or the list. */
export const eventsText = (events: string[] | null): string => (events ? events.join(', ') : 'every event type');
