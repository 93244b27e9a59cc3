import type { Client } from '../../sql/pool.js';
import { BURST_SECONDS } from '../tracking/machine.js';
import type { OutboxEventKind } from './kinds.js';

/**
 * The event pump's side of the event outbox (table event_outbox: sql/migrations/005_tracking.sql,
 * renamed by 011_event_outbox.sql; workers/jobs/event-pump.ts runs the steps). These run in the
 * pump's transaction as the service role: the pump serves every instance, and each row carries
 * its own instance_id to ClickHouse.
 */
export interface OutboxEvent {
  id: number;
  instance_id: number;
  mail_id: string;
  kind: OutboxEventKind;
  /** The status a 'status' event moved the mail to (1-7). */
  status: number | null;
  /** On a move to bounced: the bounce's reason (mail_bounces.reason; a mail bounces once). */
  bounce_reason: string | null;
  url: string | null;
  user_agent: string | null;
  ip: string | null;
  occurred_at: Date;
  machine: string | null;
  stage: number;
  /** The mail's attributes; null when the mail was purged before its event was pumped. */
  msg_id: string | null;
  to_email: string | null;
  /** The mail's mailbox provider (engines/providers/table.ts). */
  provider: string | null;
  sender_id: number | null;
  sender: string | null;
  subject: string | null;
  custom_msg_id: string | null;
  custom_group_code: string | null;
  received_at: Date | null;
  sent_at: Date | null;
}

const CLAIM = (stage: 0 | 1) => `
SELECT e.id, e.instance_id, e.mail_id, e.kind, e.status, e.url, e.user_agent, host(e.ip) AS ip, e.occurred_at, e.machine, e.stage,
       m.msg_id, m.to_email, m.provider, m.sender_id, m.sender, m.subject, m.custom_msg_id, m.custom_group_code, m.received_at, m.sent_at,
       CASE WHEN e.kind = 'status' AND e.status = 6
            THEN (SELECT b.reason FROM mail_bounces b WHERE b.mail_id = e.mail_id ORDER BY b.id DESC LIMIT 1) END AS bounce_reason
  FROM event_outbox e LEFT JOIN mails m ON m.mail_id = e.mail_id
 WHERE e.stage = ${stage}
 ORDER BY e.id
 LIMIT $1
 FOR UPDATE OF e SKIP LOCKED`;

/** Oldest events not yet counted (stage 0), locked for this transaction; other pumps skip them. */
export async function claimNew(c: Client, limit: number): Promise<OutboxEvent[]> {
  return (await c.query<OutboxEvent>({ name: 'outbox_claim_new', text: CLAIM(0), values: [limit] })).rows;
}

/** Oldest counted events ClickHouse has not acknowledged yet (stage 1). */
export async function claimUnshipped(c: Client, limit: number): Promise<OutboxEvent[]> {
  return (await c.query<OutboxEvent>({ name: 'outbox_claim_unshipped', text: CLAIM(1), values: [limit] })).rows;
}

/** Clicks of these mails around [from, to] (widened by the burst window), any stage. */
export async function clicksAround(
  c: Client,
  mailIds: readonly string[],
  from: Date,
  to: Date,
): Promise<Array<{ id: number; mail_id: string; url: string | null; occurred_at: Date; machine: string | null; stage: number }>> {
  const { rows } = await c.query(
    `SELECT id, mail_id, url, occurred_at, machine, stage FROM event_outbox
      WHERE mail_id = ANY($1::text[]) AND kind = 'click'
        AND occurred_at BETWEEN $2::timestamptz - make_interval(secs => $4) AND $3::timestamptz + make_interval(secs => $4)`,
    [mailIds, from, to, BURST_SECONDS],
  );
  return rows;
}

/**
 * Lock the mails a batch touches, in mail_id order (two pumps, or a pump and a send worker,
 * never wait on each other in a cycle), so the counts added and the snapshots read after are
 * those of the committed rows plus this transaction's own changes.
 */
export async function lockMails(c: Client, mailIds: readonly string[]): Promise<void> {
  if (!mailIds.length) return;
  await c.query({
    name: 'outbox_lock_mails',
    text: `SELECT 1 FROM mails WHERE mail_id = ANY($1::text[]) ORDER BY mail_id FOR UPDATE`,
    values: [mailIds],
  });
}

/** New opens and clicks of one mail, and how many of them no machine rule flagged. */
export interface MailCounts {
  opens: number;
  clicks: number;
  humanOpens: number;
  humanClicks: number;
}

/**
 * Add counted opens and clicks to their (locked) mails, the human ones to human_opens and
 * human_clicks too (a NULL there stays NULL: sql/migrations/029_human_counts.sql).
 */
export async function addCounts(c: Client, counts: Map<string, MailCounts>): Promise<void> {
  if (!counts.size) return;
  const ids = [...counts.keys()];
  const of = (k: keyof MailCounts) => ids.map((id) => counts.get(id)![k]);
  await c.query(
    `UPDATE mails m SET opens = m.opens + x.opens, clicks = m.clicks + x.clicks,
                        human_opens = m.human_opens + x.human_opens, human_clicks = m.human_clicks + x.human_clicks
       FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::int[]) AS x(mail_id, opens, clicks, human_opens, human_clicks)
      WHERE m.mail_id = x.mail_id`,
    [ids, of('opens'), of('clicks'), of('humanOpens'), of('humanClicks')],
  );
}

/** A mail's current row as ClickHouse's mirror holds it (analytics/migrations/003_mails_mirror.ts). */
export interface MailSnapshot {
  instance_id: number;
  received_at: Date;
  mail_id: string;
  msg_id: string;
  recipient: string;
  /** The mailbox provider (engines/providers/table.ts). */
  provider: string;
  subject: string;
  sender_id: number | null;
  sender: string | null;
  status: number;
  /** hard, soft, or '' when not bounced. */
  bounce_class: string;
  opens: number;
  clicks: number;
  /** Null for a mail opened (clicked) before human counts existed (sql/migrations/029_human_counts.sql). */
  human_opens: number | null;
  human_clicks: number | null;
  queued_at: Date | null;
  sent_at: Date | null;
  delay: number | null;
  custom_msg_id: string | null;
  custom_group_code: string | null;
  /** Microseconds of the Postgres clock at this read, as a decimal string (beyond a JS number's exact range): orders snapshots, newest wins. */
  version: string;
}

/** The current rows of (locked) mails, for ClickHouse's mirror. */
export async function snapshotMails(c: Client, mailIds: readonly string[]): Promise<MailSnapshot[]> {
  if (!mailIds.length) return [];
  const { rows } = await c.query<MailSnapshot>({
    name: 'outbox_snapshot_mails',
    text: `SELECT instance_id, received_at, mail_id, msg_id, to_email AS recipient, provider, subject, sender_id, sender, status,
                  coalesce(bounce_class, '') AS bounce_class,
                  opens, clicks, human_opens, human_clicks, queued_at, sent_at, delay, custom_msg_id, custom_group_code,
                  (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS version
             FROM mails WHERE mail_id = ANY($1::text[])`,
    values: [mailIds],
  });
  return rows;
}

/** Move events to a stage, recording their machine flag. */
export async function setStage(c: Client, events: ReadonlyArray<{ id: number; machine: string | null }>, stage: 1 | 2): Promise<void> {
  if (!events.length) return;
  await c.query(
    `UPDATE event_outbox e SET stage = $3, machine = x.machine
       FROM unnest($1::bigint[], $2::text[]) AS x(id, machine) WHERE e.id = x.id`,
    [events.map((e) => e.id), events.map((e) => e.machine), stage],
  );
}

/**
 * Mark shipped events stage 2, each only if it still holds the flag that was shipped: an event
 * re-flagged meanwhile (reflag) stays at stage 1 and ships again with its new flag.
 */
export async function markShipped(c: Client, events: ReadonlyArray<{ id: number; machine: string | null }>): Promise<void> {
  if (!events.length) return;
  await c.query(
    `UPDATE event_outbox e SET stage = 2
       FROM unnest($1::bigint[], $2::text[]) AS x(id, machine)
      WHERE e.id = x.id AND e.stage = 1 AND e.machine IS NOT DISTINCT FROM x.machine`,
    [events.map((e) => e.id), events.map((e) => e.machine)],
  );
}

/**
 * Flag clicks counted earlier that a newer click revealed as machine-made (the first click of a
 * burst), and take them off their (locked) mails' human_clicks; shipped ones go back to stage 1
 * so ClickHouse gets the flagged version (it replaces the row: same key, later shipped_at).
 */
export async function reflag(c: Client, events: ReadonlyArray<{ id: number; machine: string }>): Promise<void> {
  if (!events.length) return;
  await c.query(
    `WITH flagged AS (
       UPDATE event_outbox e SET machine = x.machine, stage = CASE WHEN e.stage = 2 THEN 1 ELSE e.stage END
         FROM unnest($1::bigint[], $2::text[]) AS x(id, machine)
        WHERE e.id = x.id AND e.machine IS NULL AND e.stage > 0 AND e.kind = 'click'
        RETURNING e.mail_id),
     per_mail AS (SELECT mail_id, count(*)::int AS n FROM flagged GROUP BY mail_id)
     UPDATE mails m SET human_clicks = greatest(m.human_clicks - per_mail.n, 0)
       FROM per_mail WHERE m.mail_id = per_mail.mail_id`,
    [events.map((e) => e.id), events.map((e) => e.machine)],
  );
}

/**
 * Housekeeping: shipped events older than `keepHours` leave Postgres (ClickHouse keeps them), once
 * the webhook stage has also taken them (webhooks_done: their bodies are then in webhook_events,
 * which retries and replays read; sql/migrations/017_webhooks.sql).
 */
export async function deleteShipped(c: Client, keepHours: number, batch = 10_000): Promise<number> {
  const { rowCount } = await c.query(
    `DELETE FROM event_outbox WHERE id IN (
       SELECT id FROM event_outbox WHERE stage = 2 AND webhooks_done AND occurred_at < now() - make_interval(hours => $1) LIMIT $2)`,
    [keepHours, batch],
  );
  return rowCount ?? 0;
}
