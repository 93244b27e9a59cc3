import type { Pool } from '../../sql/pool.js';
import { AppError, NotFoundError } from '../errors.js';
import type { Page, PageRequest } from '../pagination.js';
import { toPage, window } from '../pagination.js';
import { likeContains, likePrefix } from '../text.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { toUtcRange, type LocalDateFilter } from '../time/local-date-range.js';
import { idTime, retentionStart } from './ids.js';
import { MailStatus } from './status.js';

/** The Mail resource of the spec, field for field. */
export interface Mail {
  mail_id: string;
  msg_id: string | null;
  to: string;
  subject: string;
  sender: string | null;
  status: number | null;
  opens: number;
  clicks: number;
  /** Cartero's: the opens and clicks no machine rule flagged; null for a mail counted before they were (sql/migrations/029_human_counts.sql). */
  human_opens: number | null;
  human_clicks: number | null;
  received_at: Date | null;
  queued_at: Date | null;
  sent_at: Date | null;
  schedule_at: null;
  delay: number | null;
  custom_msg_id: string | null;
  custom_group_code: string | null;
}

/**
 * opens and clicks are right the moment a tracking endpoint answered: the row's counts (settled
 * by the event pump, workers/jobs/event-pump.ts) plus the events still waiting in the event outbox at
 * stage 0, a handful at most, read through the outbox's mail_id index. human_opens and
 * human_clicks are the row's alone: an event is judged human or machine-made when the pump counts
 * it (within a tick), and ClickHouse's exclude_machine=true listings see it only then too.
 */
const MAIL_FROM = `mails m LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE e.kind = 'open')::int AS opens, count(*) FILTER (WHERE e.kind = 'click')::int AS clicks
      FROM event_outbox e WHERE e.mail_id = m.mail_id AND e.stage = 0) pending ON true`;
const OPENS = 'm.opens + coalesce(pending.opens, 0)';
const CLICKS = 'm.clicks + coalesce(pending.clicks, 0)';

const MAIL_COLUMNS = `m.mail_id, m.msg_id, m.to_email AS "to", m.subject, m.sender, m.status, ${OPENS} AS opens, ${CLICKS} AS clicks,
  m.human_opens, m.human_clicks, m.received_at, m.queued_at, m.sent_at, NULL AS schedule_at, m.delay, m.custom_msg_id, m.custom_group_code`;

/**
 * The retention rule of mail-by-id and mail logs: an id whose embedded creation time is before
 * the online window is "valid but too old" (404 mail_outside_retention) whether or not the purge
 * has removed its row yet; anything that is not one of our ids is simply not found.
 */
function checkRetention(mailId: string): void {
  const created = idTime(mailId);
  if (!created) throw new NotFoundError('mail', mailId);
  if (created < retentionStart()) {
    throw new AppError('mail_outside_retention', `mail ${mailId} is older than the 3-month online retention window`);
  }
}

export async function getMail(tenant: Tenant, pool: Pool, mailId: string): Promise<Mail> {
  checkRetention(mailId);
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Mail>(`SELECT ${MAIL_COLUMNS} FROM ${MAIL_FROM} WHERE m.instance_id = $1 AND m.mail_id = $2`, [tenant.instanceId, mailId]),
  );
  if (!rows[0]) throw new NotFoundError('mail', mailId);
  return rows[0];
}

export interface MailLog {
  status: number;
  created_at: Date;
  reason: string | null;
  smtp_code: number | null;
  smtp_enhanced: string | null;
  smtp_reply: string | null;
  attempt: number | null;
  /** Why the mail bounced (engines/bounces/reason.ts), on a bounce's row and a delay report's note. */
  bounce_reason: string | null;
  /** hard or soft, on the row of the move to bounced; null on every other row. */
  bounce_class: 'hard' | 'soft' | null;
}

export async function listMailLogs(tenant: Tenant, pool: Pool, mailId: string, req: PageRequest): Promise<Page<MailLog>> {
  checkRetention(mailId);
  const { limit, offset } = window(req);
  return withTenant(pool, tenant, async (c) => {
    const exists = await c.query('SELECT 1 FROM mails WHERE instance_id = $1 AND mail_id = $2', [tenant.instanceId, mailId]);
    if (!exists.rowCount) throw new NotFoundError('mail', mailId);
    // The class is the mail's: bounced is final, so a mail has at most one move to bounced, and
    // its row is the one that takes it (a delay report's note, which carries a reason too, not).
    const rows = await c.query<MailLog>(
      `SELECT l.status, l.created_at, l.reason, l.smtp_code, l.smtp_enhanced, l.smtp_reply, l.attempt, l.bounce_reason,
              CASE WHEN l.status = ${MailStatus.bounced} AND l.moved THEN m.bounce_class END AS bounce_class
         FROM mail_logs l JOIN mails m ON m.mail_id = l.mail_id
        WHERE l.instance_id = $1 AND l.mail_id = $2 ORDER BY l.id LIMIT $3 OFFSET $4`,
      [tenant.instanceId, mailId, limit, offset],
    );
    const total = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM mail_logs WHERE instance_id = $1 AND mail_id = $2', [
      tenant.instanceId,
      mailId,
    ]);
    return toPage(rows.rows, req, total.rows[0]!.n);
  });
}

/**
 * The common filters of the activity listings (spec: Common filters of the activity listings),
 * shared by GET /v1/mails here and the ClickHouse listings (analytics/activities/filters.ts).
 */
export interface ActivityFilter extends LocalDateFilter {
  msg_id?: string;
  mail_id?: string;
  sender_id?: number;
  recipient?: string;
  /** Ignored without `recipient`; eq when omitted. */
  recipient_operator?: 'eq' | 'starts_with';
  custom_msg_id?: string;
  custom_group_code?: string;
  /** Partial, case-insensitive. */
  subject?: string;
}

/** GET /v1/mails: the common filters plus sent's own. */
export interface MailFilter extends PageRequest, ActivityFilter {
  status?: number;
  opened?: 'all' | 'opened' | 'unopened';
}

/**
 * GET /v1/mails: newest first, within the 3-month online window. total_items is null (the spec
 * allows it): an exact count over months of mail on every page would cost more than the page.
 */
export async function listMails(tenant: Tenant, pool: Pool, f: MailFilter): Promise<Page<Mail>> {
  const range = toUtcRange(f, tenant.tz);
  const windowStart = retentionStart();
  const from = range.from && range.from > windowStart ? range.from : windowStart;
  const recipient = f.recipient === undefined ? null : f.recipient.toLowerCase();
  const startsWith = f.recipient_operator === 'starts_with';
  const { limit, offset } = window(f);
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Mail>(
      `SELECT ${MAIL_COLUMNS} FROM ${MAIL_FROM}
        WHERE m.instance_id = $1
          AND m.received_at >= $2 AND ($3::timestamptz IS NULL OR m.received_at < $3)
          AND ($4::text IS NULL OR m.msg_id = $4)
          AND ($5::text IS NULL OR m.mail_id = $5)
          AND ($6::bigint IS NULL OR m.sender_id = $6)
          AND ($7::text IS NULL OR (CASE WHEN $8 THEN m.to_email LIKE $9 ELSE m.to_email = $7 END))
          AND ($10::text IS NULL OR m.custom_msg_id = $10)
          AND ($11::text IS NULL OR m.custom_group_code = $11)
          AND ($12::text IS NULL OR m.subject ILIKE $12)
          AND ($13::smallint IS NULL OR m.status = $13)
          AND (CASE $14::text WHEN 'opened' THEN ${OPENS} > 0 WHEN 'unopened' THEN m.status = 3 AND ${OPENS} = 0 ELSE true END)
        ORDER BY m.received_at DESC, m.id DESC
        LIMIT $15 OFFSET $16`,
      [
        tenant.instanceId, from, range.to, f.msg_id ?? null, f.mail_id ?? null, f.sender_id ?? null,
        recipient, startsWith, recipient === null ? null : likePrefix(recipient),
        f.custom_msg_id ?? null, f.custom_group_code ?? null, f.subject === undefined ? null : likeContains(f.subject),
        f.status ?? null, f.opened ?? 'all', limit, offset,
      ],
    ),
  );
  return toPage(rows, f, null);
}
