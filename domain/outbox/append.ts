import type { Client, Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { OUTBOX_EVENT_KINDS, type OutboxEventKind } from './kinds.js';

/**
 * The one writer of the event outbox (Postgres table event_outbox): every event a domain module
 * records becomes a row here, so the columns, the subject rule (a mail or an entity, never both:
 * event_outbox_subject_check) and the statement's shape are decided once. The readers are the
 * event pump (pump.ts) and the webhook fan-out (domain/webhooks/fanout.ts). Besides these
 * functions only the triggers of sql/migrations write the table ('status' rows of mail_logs,
 * restriction.* of mail_restrictions). test/outbox-owner.test.ts keeps other INSERTs out.
 */

/** One event as its writer knows it. */
export interface OutboxEvent {
  kind: OutboxEventKind;
  /** The mail the event is about (open, click, unsubscribe, complaint); else entityId. */
  mailId?: string | null;
  /** The row the event is about (a consent event, a form submission, a webhook); else mailId. */
  entityId?: number | string | null;
  /**
   * When it happened; the transaction's now() when absent. A string is a timestamptz as Postgres
   * wrote it (`col::text`): a Date holds milliseconds, the column microseconds, and an event
   * stamped with its row's own time should carry that time exactly.
   */
  occurredAt?: Date | string | null;
  url?: string | null;
  /** Already bounded and cleaned by the writer (the limits are the writer's rules). */
  userAgent?: string | null;
  /** An address Postgres's inet accepts, or null (domain/tenancy/ip.ts clientAddress). */
  ip?: string | null;
  machine?: string | null;
}

/** Events whose instance is their mail's: a mail id, no entity. */
export type MailOutboxEvent = Omit<OutboxEvent, 'mailId' | 'entityId'> & { mailId: string };

type Queryable = Pick<Client, 'query'> | Pick<Pool, 'query'>;

/** The events as parallel arrays, from parameter $`first`: one statement, whatever the count. */
function rowsFrom(first: number): string {
  const p = (i: number): string => `$${first + i}`;
  return `unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::bigint[], ${p(3)}::text[], ${p(4)}::text[], ${p(5)}::text[], ${p(6)}::timestamptz[], ${p(7)}::text[])
          WITH ORDINALITY AS e(mail_id, kind, entity_id, url, user_agent, ip, occurred_at, machine, n)`;
}

const COLUMNS = 'mail_id, kind, entity_id, url, user_agent, ip, occurred_at, machine';
const VALUES = 'e.mail_id, e.kind, e.entity_id, e.url, e.user_agent, e.ip::inet, coalesce(e.occurred_at, now()), e.machine';

/**
 * ORDER BY the position: identity values are drawn in insertion order, so the ids follow the
 * order the writer gave (a submission's consent events before the submission, as they happened).
 */
const APPEND = `
INSERT INTO event_outbox (instance_id, ${COLUMNS})
SELECT $1::bigint, ${VALUES}
  FROM ${rowsFrom(2)}
 ORDER BY e.n
RETURNING id`;

/**
 * The instance comes from the mail row, and a mail that no longer exists (purged, or never ours)
 * inserts nothing. No ORDER BY: hits carry no order worth a sort on the hot path.
 */
const APPEND_FOR_MAILS = `
INSERT INTO event_outbox (instance_id, ${COLUMNS})
SELECT m.instance_id, ${VALUES}
  FROM ${rowsFrom(1)}
  JOIN mails m ON m.mail_id = e.mail_id`;

function columns(events: readonly OutboxEvent[]): unknown[] {
  return [
    events.map((e) => e.mailId ?? null),
    events.map((e) => e.kind),
    events.map((e) => e.entityId ?? null),
    events.map((e) => e.url ?? null),
    events.map((e) => e.userAgent ?? null),
    events.map((e) => e.ip ?? null),
    events.map((e) => e.occurredAt ?? null),
    events.map((e) => e.machine ?? null),
  ];
}

/**
 * Appends the tenant's events, in the caller's transaction (client) or on their own (pool): one
 * multi-row INSERT whatever their number, nothing for none. Returns the new ids, in the order given.
 */
export async function append(tenant: Pick<Tenant, 'instanceId'>, client: Queryable, events: OutboxEvent | readonly OutboxEvent[]): Promise<string[]> {
  const list: readonly OutboxEvent[] = Array.isArray(events) ? events : [events as OutboxEvent];
  if (!list.length) return [];
  const { rows } = await client.query<{ id: string }>({ name: 'cartero_outbox_append', text: APPEND, values: [tenant.instanceId, ...columns(list)] });
  return rows.map((r) => r.id);
}

/**
 * Appends events about mails, each in its mail's instance: the tracking hits of the web dyno
 * (domain/tracking/record.ts), whose token names only the mail and whose batches mix instances, so
 * there is no tenant to pass. One multi-row INSERT per call (the hits' group commit relies on it).
 */
export async function appendForMails(client: Queryable, events: readonly MailOutboxEvent[]): Promise<void> {
  if (!events.length) return;
  await client.query({ name: 'cartero_outbox_append_for_mails', text: APPEND_FOR_MAILS, values: columns(events) });
}

/**
 * The set-based form: the text of an INSERT (a CTE body) appending one `kind` event per row of
 * `select`, a SELECT of (instance_id, entity_id, occurred_at) over the same statement's other
 * CTEs. For the consent expiry (domain/consent/confirmation.ts), which cannot reasonably go through
 * append: its events are born in the same statement's UPDATE (... RETURNING in a CTE), its
 * scheduled run spans instances (no tenant to put first; append would take one statement per
 * instance), and append would bring every expired row back to the process only to send it again.
 * The kind is written as a literal, checked against the one list (it is never client text).
 */
export function appendSelectSql(kind: OutboxEventKind, select: string): string {
  if (!(OUTBOX_EVENT_KINDS as readonly string[]).includes(kind)) throw new Error(`unknown outbox event kind ${kind}`);
  return `INSERT INTO event_outbox (instance_id, kind, entity_id, occurred_at)
          SELECT s.instance_id, '${kind}', s.entity_id, s.occurred_at FROM (${select}) AS s(instance_id, entity_id, occurred_at)`;
}
