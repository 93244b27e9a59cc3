import { query, type Pool } from '../../sql/pool.js';
import { isoUtc } from '../../sql/iso-time.js';
import { append, appendSelectSql } from '../outbox/append.js';
import { loadTenant } from '../tenancy/instances.js';
import { clientAddress } from '../tenancy/ip.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { MAX_PROOF_USER_AGENT } from './events.js';

/**
 * Double opt-in: the moves of a pending consent event (docs/consent.md, Double opt-in). A
 * double_opt_in event is created pending and authorizes nothing; the person confirms it from the
 * link of the confirmation mail (pending -> confirmed, with the confirming request's address and
 * user agent as evidence), or it is not confirmed within CONSENT_CONFIRM_DAYS of its creation and
 * becomes expired. Both moves happen once: a confirmed or expired event never moves again, and
 * each move writes its outbox row (consent.event.confirmed / consent.event.expired) in the same
 * transaction.
 *
 * The window is one rule, applied where the event is read: a pending event older than the
 * window is expired whether or not the scheduled job (workers/jobs/consent-expiry.ts) has reached it
 * yet, so a link followed after the window never confirms, however late the job runs.
 */

/** What the confirmation page shows about an event. */
export interface ConfirmationTarget {
  tenant: Tenant;
  eventId: number;
  /** pending within the window, confirmed, or expired (an expired row, or pending past the window). */
  state: 'pending' | 'confirmed' | 'expired';
  confirmedAt: string | null;
  termName: string;
  version: string;
  body: string;
  documentUrl: string | null;
  /** The event's email contacts (stored form), the addresses the mail went to. */
  emails: string[];
  /** When the window closes (created_at + CONSENT_CONFIRM_DAYS), as windowEnd writes it. */
  expiresAt: string;
}

/**
 * When the confirmation window of row `e` (a consent event, a form submission) closes ($days:
 * CONSENT_CONFIRM_DAYS), as the mail and the page show it to a person: minutes, UTC, e.g.
 * 2026-01-08 10:15 UTC.
 */
export function windowEnd(e: string, days: string): string {
  return `to_char((${e}.created_at + make_interval(days => ${days})) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI "UTC"')`;
}

/** For `e` (consent_events) and $3 the window in days: pending and created before the window. */
const PAST_WINDOW = `(e.status = 'pending' AND e.created_at < now() - make_interval(days => $3))`;

/** The event a confirmation link names, read as the page shows it; undefined when there is none. */
export async function findConfirmationTarget(pool: Pool, instanceId: number, eventId: number, confirmDays: number): Promise<ConfirmationTarget | undefined> {
  const tenant = await loadTenant(pool, instanceId);
  if (!tenant) return undefined;
  const row = await withTenant(pool, tenant, async (c) =>
    (
      await c.query<{
        status: string;
        past_window: boolean;
        confirmed_at: string | null;
        term_name: string;
        version: string;
        body: string;
        document_url: string | null;
        emails: string[];
        expires_at: string;
      }>(
        `SELECT e.status, ${PAST_WINDOW} AS past_window, ${isoUtc('e.confirmed_at')} AS confirmed_at,
                t.name AS term_name, v.version, v.body, v.document_url,
                ${windowEnd('e', '$3')} AS expires_at,
                coalesce((SELECT array_agg(DISTINCT r.contact ORDER BY r.contact) FROM consent_rules r
                           WHERE r.instance_id = e.instance_id AND r.event_id = e.id AND r.contact_type = 'email_address'), '{}') AS emails
           FROM consent_events e
           JOIN consent_terms t ON t.instance_id = e.instance_id AND t.id = e.term_id
           JOIN consent_term_versions v ON v.instance_id = e.instance_id AND v.id = e.term_version_id
          WHERE e.instance_id = $1 AND e.id = $2`,
        [tenant.instanceId, eventId, confirmDays],
      )
    ).rows[0],
  );
  if (!row) return undefined;
  return {
    tenant,
    eventId,
    state: row.status === 'confirmed' ? 'confirmed' : row.status === 'expired' || row.past_window ? 'expired' : 'pending',
    confirmedAt: row.confirmed_at,
    termName: row.term_name,
    version: row.version,
    body: row.body,
    documentUrl: row.document_url,
    emails: row.emails,
    expiresAt: row.expires_at,
  };
}

export type ConfirmOutcome = 'confirmed' | 'already_confirmed' | 'expired';

/**
 * The person confirms (the page's POST): a pending event within the window becomes confirmed,
 * with confirmed_at and the request's address and user agent (evidence of who confirmed, shown by
 * the proof export), and its outbox row. A confirmed event is left as it is (already_confirmed:
 * the evidence of the first confirmation stays); an expired one, or one pending past the window
 * (expired here and now, as the job would), confirms nothing. The event's row is locked first, so
 * two confirmations at once confirm it once.
 */
export async function confirmEvent(
  tenant: Tenant,
  pool: Pool,
  eventId: number,
  evidence: { ip: string | null | undefined; userAgent: string | null | undefined },
  confirmDays: number,
): Promise<ConfirmOutcome | undefined> {
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<{ status: string; past_window: boolean }>(
      `SELECT e.status, ${PAST_WINDOW} AS past_window FROM consent_events e WHERE e.instance_id = $1 AND e.id = $2 FOR UPDATE`,
      [tenant.instanceId, eventId, confirmDays],
    );
    const event = rows[0];
    if (!event) return undefined;
    if (event.status === 'confirmed') return 'already_confirmed';
    if (event.status === 'expired') return 'expired';
    if (event.past_window) {
      await c.query(expireStatement('SELECT id FROM consent_events WHERE instance_id = $1 AND id = $2'), [tenant.instanceId, eventId]);
      return 'expired';
    }
    const confirmed = (
      await c.query<{ confirmed_at: Date }>(
        `UPDATE consent_events SET status = 'confirmed', confirmed_at = now(), confirmation_ip = $3::inet, confirmation_user_agent = $4
          WHERE instance_id = $1 AND id = $2 AND status = 'pending' RETURNING confirmed_at`,
        [tenant.instanceId, eventId, clientAddress(evidence.ip ?? undefined), evidence.userAgent ? evidence.userAgent.slice(0, MAX_PROOF_USER_AGENT) : null],
      )
    ).rows[0]!;
    await append(tenant, c, { kind: 'consent.event.confirmed', entityId: eventId, occurredAt: confirmed.confirmed_at });
    return 'confirmed';
  });
}

/**
 * The statement that expires the pending events `picked` (a SELECT of consent_events ids, its
 * parameters from $1) names, each with its consent.event.expired outbox row, returning the ids
 * expired. Only pending rows move, so running it again changes nothing. One statement, set-based
 * (appendSelectSql says why it is not append).
 */
function expireStatement(picked: string): string {
  return `WITH picked AS (${picked}),
          expired AS (
            UPDATE consent_events e SET status = 'expired', expired_at = now()
              FROM picked WHERE e.id = picked.id AND e.status = 'pending'
            RETURNING e.instance_id, e.id, e.expired_at
          ),
          outbox AS (${appendSelectSql('consent.event.expired', 'SELECT instance_id, id, expired_at FROM expired')})
     SELECT id FROM expired`;
}

/**
 * The scheduled expiry (workers/jobs/consent-expiry.ts), across instances as the service: pending
 * events created more than `confirmDays` ago, oldest first, `batch` per transaction (short locks
 * however large the backlog; SKIP LOCKED passes over an event being confirmed right now, whose
 * confirmation then sees the window closed and expires it itself). The partial index
 * consent_events_pending_idx is this scan. Idempotent: what is no longer pending is not touched.
 */
export async function expirePendingEvents(pool: Pool, confirmDays: number, batch = 1_000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await query(
      pool,
      expireStatement(
        `SELECT id FROM consent_events
          WHERE status = 'pending' AND created_at < now() - make_interval(days => $1)
          ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      ),
      [confirmDays, batch],
    );
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return total;
  }
}
