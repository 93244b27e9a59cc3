import type { Client } from '../../sql/pool.js';
import { consentVerdicts } from '../consent/send-hook.js';
import type { Tenant } from '../tenancy/context.js';
import type { Variables } from './merge-tags.js';
import { MailStatus } from './status.js';

/**
 * What the send worker reads about a batch's mails, in two parts: what rendering needs, read
 * without locks before any transaction (loadMailsToRender: the recipient, the message and its
 * content, the sender's domain), and what the gates and moves decide on, read under row locks in
 * the transaction that moves the mails (lockSendStates). Rendering is CPU work that must not
 * hold locks or a connection; each query reads only its own part.
 */
export interface MailToRender {
  mail_id: string;
  message_id: number;
  status: number;
  /** A deferred mail's next try has come (or it has none): one not due yet is not rendered. */
  due: boolean;
  to_email: string;
  to_name: string | null;
  recipient_variables: Variables;
  subject: string;
  from_email: string;
  from_name: string | null;
  track_opens: boolean;
  track_clicks: boolean;
  domain_name: string | null;
}

/**
 * A message's content (html, attachments: up to 10 MiB), read once per batch and shared by its
 * mails, not once per recipient. Written at acceptance and never changed.
 */
export interface MessageContent {
  html: string | null;
  text_body: string | null;
  reply_to: string | null;
  headers: Record<string, unknown>;
  attachments: unknown[];
  variables: Variables;
}

export type RenderContext = MailToRender & MessageContent;

/** The mails as they stand, with their messages' content, without locks. */
export async function loadMailsToRender(tenant: Tenant, client: Client, mailIds: readonly string[]): Promise<RenderContext[]> {
  const { rows } = await client.query<MailToRender>(
    `SELECT m.mail_id, m.message_id, m.status, coalesce(m.next_attempt_at <= now(), true) AS due, m.to_email, m.to_name, m.variables AS recipient_variables, m.subject,
            g.from_email, g.from_name, g.track_opens, g.track_clicks, d.name AS domain_name
       FROM mails m
       JOIN messages g ON g.instance_id = m.instance_id AND g.id = m.message_id
       LEFT JOIN senders s ON s.instance_id = m.instance_id AND s.id = m.sender_id
       LEFT JOIN domains d ON d.instance_id = s.instance_id AND d.id = s.domain_id
      WHERE m.instance_id = $1 AND m.mail_id = ANY ($2::text[])`,
    [tenant.instanceId, [...mailIds]],
  );
  const messageIds = [...new Set(rows.map((r) => r.message_id))];
  const contents = new Map<number, MessageContent>();
  if (messageIds.length) {
    const messages = await client.query<MessageContent & { id: number }>(
      `SELECT id, html, text_body, reply_to, headers, attachments, variables
         FROM messages WHERE instance_id = $1 AND id = ANY ($2::bigint[])`,
      [tenant.instanceId, messageIds],
    );
    for (const { id, ...content } of messages.rows) contents.set(id, content);
  }
  return rows.map((mail) => ({ ...mail, ...contents.get(mail.message_id)! }));
}

/** What transaction A decides on: status, the send lease, the gates. */
export interface SendState {
  mail_id: string;
  status: number;
  attempts: number;
  to_email: string;
  sender_id: number | null;
  /** A deferred mail's next try (its move to deferred set it; every other move clears it). */
  next_attempt_at: Date | null;
  /** Its next try has come (or it has none): a retry job that comes early, or a duplicate, leaves it for its own. */
  due: boolean;
  /** The worker whose run moved this mail to queued last (workers/machinery/send-lease.ts). */
  held_by: string | null;
  /** Queued, held for less than the hold bound by a worker whose lease is live. */
  held_by_live_worker: boolean;
  sender_found: boolean;
  is_consent_required: boolean | null;
  domain_name: string | null;
  domain_verified: boolean | null;
  /** A sandbox sender's mail to an address that is not (or no longer) a member's. */
  sandbox_outside: boolean;
  restriction_id: number | null;
  restriction_reason: string | null;
  monthly_quota: number | null;
}

/**
 * The mails locked in id order, the order every transaction that locks several mails uses (two
 * batches never deadlock on each other; a second job for the same mail waits rather than racing).
 */
export async function lockSendStates(tenant: Tenant, client: Client, mailIds: readonly string[], holdSeconds: number): Promise<SendState[]> {
  const { rows } = await client.query<SendState>(
    `SELECT m.mail_id, m.status, m.attempts, m.to_email, m.sender_id, m.held_by, m.next_attempt_at,
            coalesce(m.next_attempt_at <= now(), true) AS due,
            coalesce(m.status = ${MailStatus.queued} AND m.held_since > now() - make_interval(secs => $3)
              AND EXISTS (SELECT 1 FROM send_leases l WHERE l.worker_id = m.held_by AND l.expires_at > now()), false) AS held_by_live_worker,
            s.id IS NOT NULL AS sender_found, s.is_consent_required, d.name AS domain_name, d.is_verified AS domain_verified,
            CASE WHEN d.is_sandbox THEN lower(m.to_email) NOT IN (SELECT cartero_member_addresses()) ELSE false END AS sandbox_outside,
            r.id AS restriction_id, r.reason AS restriction_reason, i.monthly_quota
       FROM mails m
       JOIN instances i ON i.id = m.instance_id
       LEFT JOIN senders s ON s.instance_id = m.instance_id AND s.id = m.sender_id
       LEFT JOIN domains d ON d.instance_id = s.instance_id AND d.id = s.domain_id
       LEFT JOIN mail_restrictions r ON r.instance_id = m.instance_id AND r.recipient = lower(m.to_email) AND r.deleted_at IS NULL
      WHERE m.instance_id = $1 AND m.mail_id = ANY ($2::text[])
      ORDER BY m.mail_id
        FOR UPDATE OF m`,
    [tenant.instanceId, [...mailIds], holdSeconds],
  );
  return rows;
}

export type GateVerdict = { pass: true } | { pass: false; to: typeof MailStatus.dropped | typeof MailStatus.onhold; reason: string };

/**
 * The send-time gates but the quota, in order, for a batch's mails; the first that fails decides a
 * mail's move and its logged reason. They run at every try (a restriction added while a mail was
 * deferred still stops it). The rows' own gates come from lockSendStates' one read; consent, for
 * the mails whose sender requires it, from one batch call (domain/consent/send-hook.ts). The
 * quota is claimed after them for the whole batch at once (claimMonthlyQuota).
 */
export async function checkGates(tenant: Tenant, client: Client, states: readonly SendState[]): Promise<Map<string, GateVerdict>> {
  const verdicts = new Map<string, GateVerdict>();
  const consentAsked: SendState[] = [];
  for (const ctx of states) {
    const verdict = rowGates(ctx);
    if (verdict) verdicts.set(ctx.mail_id, verdict);
    else if (ctx.is_consent_required) consentAsked.push(ctx);
    else verdicts.set(ctx.mail_id, { pass: true });
  }
  const consent = await consentVerdicts(tenant, client, consentAsked.map((ctx) => ({ mailId: ctx.mail_id, recipient: ctx.to_email.toLowerCase() })));
  for (const ctx of consentAsked) {
    const c = consent.get(ctx.mail_id)!;
    verdicts.set(ctx.mail_id, c.allowed ? { pass: true } : { pass: false, to: MailStatus.dropped, reason: c.reason ?? 'no_consent' });
  }
  return verdicts;
}

/** The gates the locked row answers by itself; undefined when they all pass. */
function rowGates(ctx: SendState): GateVerdict | undefined {
  if (!ctx.sender_found) return { pass: false, to: MailStatus.dropped, reason: 'sender_not_found' };
  if (!ctx.domain_verified) return { pass: false, to: MailStatus.dropped, reason: 'sender_domain_unverified' };
  if (ctx.sandbox_outside) return { pass: false, to: MailStatus.dropped, reason: 'sandbox_relay_restricted' };
  if (ctx.restriction_id !== null) return { pass: false, to: MailStatus.dropped, reason: `restricted:${ctx.restriction_reason ?? 'unspecified'}` };
  return undefined;
}

/** The reason logged on a mail put on hold because the quota is used up. */
export const QUOTA_HOLD_REASON = 'monthly_quota_exceeded';

/**
 * Claims up to `wanted` mails of the instance's quota for the current UTC month, atomically across
 * workers, and says how many it got (the first ones of the batch go; the rest wait on hold). Two
 * statements whatever the batch's size: the upsert locks the month's row (serialising claimers
 * until the commit) and reads its count; the update adds what is left of the quota, at most
 * `wanted`. Only a mail's first pass claims (a retried mail has its unit).
 */
export async function claimMonthlyQuota(tenant: Tenant, client: Client, quota: number, wanted: number): Promise<number> {
  if (wanted <= 0 || quota <= 0) return 0;
  const month = "date_trunc('month', now() AT TIME ZONE 'UTC')::date";
  const { rows } = await client.query<{ used: number }>(
    `INSERT INTO quota_usage AS q (instance_id, month, used) VALUES ($1, ${month}, 0)
     ON CONFLICT (instance_id, month) DO UPDATE SET used = q.used
     RETURNING used`,
    [tenant.instanceId],
  );
  const granted = Math.max(0, Math.min(wanted, quota - rows[0]!.used));
  if (granted > 0) {
    await client.query(`UPDATE quota_usage SET used = used + $2 WHERE instance_id = $1 AND month = ${month}`, [tenant.instanceId, granted]);
  }
  return granted;
}
