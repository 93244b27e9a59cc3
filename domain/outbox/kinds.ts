/**
 * The kinds of event the event outbox holds (Postgres table event_outbox,
 * sql/migrations/011_event_outbox.sql): the one list. The database does not enumerate them (no
 * CHECK to rewrite, no reference table to keep in step), so adding a kind is one entry here;
 * every writer appends through append.ts, its kind typed as OutboxEventKind, and the 'status'
 * rows come from the trigger on mail_logs.
 *
 *  - open, click: a tracking hit (domain/tracking/record.ts);
 *  - unsubscribe: a recipient unsubscribed (domain/tracking/unsubscribe.ts);
 *  - complaint: a feedback-loop report (domain/complaints/record.ts);
 *  - status: a delivery move of a mail, with the status it reached (every mail_logs move);
 *  - form.submission.created, form.submission.confirmed: a form submission (entity_id: its id; domain/forms);
 *  - restriction.created, restriction.lifted: a restriction put or lifted (entity_id: its id; the trigger of
 *    sql/migrations/017_webhooks.sql on mail_restrictions);
 *  - webhook.test: POST /v1/webhooks/{id}/test (entity_id: the webhook; domain/webhooks/webhooks.ts);
 *  - domain.dmarc_report: a DMARC aggregate report stored for a domain (entity_id: its dmarc_reports id),
 *    appended by domain/dmarc/store.ts in the transaction of its INSERT, once per stored report;
 *  - deliverability.threshold_crossed, deliverability.threshold_recovered: a provider's complaint or bounce
 *    rate for a sending domain crossed a threshold, or fell back below one (entity_id: its deliverability_alerts
 *    id), appended by domain/deliverability/alerts.ts in the transaction that claims the alert, once per alert.
 *
 * The event pump ships every kind about a mail to ClickHouse's mail_events as its event_type (a
 * 'status' row as the name of its status), so a new mail kind appears there too: docs/analytics.md
 * warns data teams that new event_type values may appear. A row about an entity (mail_id null)
 * has no mail to ship: the pump marks it done (stage 2) and only the webhook fan-out reads it.
 */
export const OUTBOX_EVENT_KINDS = ['open', 'click', 'unsubscribe', 'complaint', 'status', 'consent.event.created', 'consent.event.confirmed', 'consent.event.expired', 'form.submission.created', 'form.submission.confirmed', 'restriction.created', 'restriction.lifted', 'webhook.test', 'domain.dmarc_report', 'deliverability.threshold_crossed', 'deliverability.threshold_recovered'] as const;

export type OutboxEventKind = (typeof OUTBOX_EVENT_KINDS)[number];
