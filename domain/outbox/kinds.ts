/**
 * The kinds of event the event outbox holds (Postgres table event_outbox,
 * sql/migrations/011_event_outbox.sql): the one list. The database does not enumerate them (no
 * CHECK to rewrite, no reference table to keep in step), so adding a kind is one entry here;
 * every writer passes its kind typed as OutboxEventKind, and the 'status' rows come from the
 * trigger on mail_logs.
 *
 *  - open, click: a tracking hit (domain/tracking/record.ts);
 *  - unsubscribe: a recipient unsubscribed (domain/tracking/unsubscribe.ts);
 *  - complaint: a feedback-loop report (domain/complaints/record.ts);
 *  - status: a delivery move of a mail, with the status it reached (every mail_logs move).
 *
 * The event pump ships every kind to ClickHouse's mail_events as its event_type (a 'status' row
 * as the name of its status), so a new kind appears there too: docs/analytics.md warns data
 * teams that new event_type values may appear.
 */
export const OUTBOX_EVENT_KINDS = ['open', 'click', 'unsubscribe', 'complaint', 'status', 'consent.event.created', 'consent.event.confirmed', 'consent.event.expired'] as const;

export type OutboxEventKind = (typeof OUTBOX_EVENT_KINDS)[number];
