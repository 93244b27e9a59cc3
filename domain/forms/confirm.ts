import type { JobQueue } from '../job-queue.js';
import { append } from '../outbox/append.js';
import { loadTenant } from '../tenancy/instances.js';
import { clientAddress } from '../tenancy/ip.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { signToken, verifyToken } from '../tracking/tokens.js';
import { isoUtc } from '../../sql/iso-time.js';
import type { Pool } from '../../sql/pool.js';
import { afterConfirmationJobs } from './after-confirmation.js';
import { isRowId } from '../row-id.js';
import { windowEnd } from '../consent/confirmation.js';
import { MAX_PROOF_USER_AGENT } from '../consent/events.js';
import { confirmFormEvents } from '../consent/form-events.js';

/**
 * Double confirmation of a form submission (docs/forms.md, Confirmation link). A submission to a
 * form that requires confirmation is pending, and so are the consent events it produced; the
 * confirmation mail (mails.ts) carries `{PUBLIC_URL}/fc/{token}` (api/routes/form-confirm-links.ts).
 * GET shows a page with one button (link scanners fetch links), its POST confirms: the
 * submission and every pending consent event of it become confirmed, with the confirming
 * request's address and user agent as evidence, their outbox rows (form.submission.confirmed,
 * consent.event.confirmed) are written, and the confirmed submission's jobs (auto-reply, team
 * notice, dataset feed) are enqueued, all in one transaction. Once only: a second POST changes
 * nothing. The window is the consent one (CONSENT_CONFIRM_DAYS): past it nothing is confirmed
 * (the consent events expire by the consent expiry job).
 *
 * The token is signed like every public link (domain/tracking/tokens.ts) with its own kind,
 * form_confirm, so no other link can be replayed as this one nor this one as them.
 */

export interface FormConfirmToken {
  kind: 'form_confirm';
  instance_id: number;
  submission_id: number;
}

export const FORM_CONFIRM_LINK_PREFIX = '/fc/';

export function formConfirmUrl(publicUrl: string, secret: string, tenant: Tenant, submissionId: number): string {
  const token = signToken(secret, { kind: 'form_confirm', instance_id: tenant.instanceId, submission_id: submissionId } satisfies FormConfirmToken);
  return `${publicUrl}${FORM_CONFIRM_LINK_PREFIX}${token}`;
}

/** The payload of a form confirmation token this key signed, or undefined. */
export function readFormConfirmToken(secret: string, raw: string): FormConfirmToken | undefined {
  const p = verifyToken(secret, raw);
  if (!p || p.kind !== 'form_confirm' || !isRowId(p.instance_id) || !isRowId(p.submission_id)) return undefined;
  return { kind: 'form_confirm', instance_id: p.instance_id, submission_id: p.submission_id };
}

/** What the confirmation page shows. */
export interface SubmissionConfirmTarget {
  tenant: Tenant;
  submissionId: number;
  state: 'pending' | 'confirmed' | 'expired';
  formName: string;
  email: string | null;
  /** The consents the person gave (term names and versions), what confirming puts in force. */
  consents: Array<{ term_name: string; version: string }>;
  expiresAt: string;
}

/** For `s` (form_submissions), $3 the window in days. */
const PAST_WINDOW = `(s.status = 'pending' AND s.created_at < now() - make_interval(days => $3))`;

export async function findSubmissionConfirmTarget(
  pool: Pool,
  instanceId: number,
  submissionId: number,
  confirmDays: number,
): Promise<SubmissionConfirmTarget | undefined> {
  const tenant = await loadTenant(pool, instanceId);
  if (!tenant) return undefined;
  const row = await withTenant(pool, tenant, async (c) =>
    (
      await c.query<{ status: string; past_window: boolean; form_name: string; email: string | null; consents: SubmissionConfirmTarget['consents']; expires_at: string }>(
        `SELECT s.status, ${PAST_WINDOW} AS past_window, f.name AS form_name, s.field_values->>'email' AS email,
                ${windowEnd('s', '$3')} AS expires_at,
                coalesce((SELECT json_agg(json_build_object('term_name', t.name, 'version', v.version) ORDER BY e.id)
                            FROM consent_events e
                            JOIN consent_terms t ON t.instance_id = e.instance_id AND t.id = e.term_id
                            JOIN consent_term_versions v ON v.instance_id = e.instance_id AND v.id = e.term_version_id
                           WHERE e.instance_id = s.instance_id AND e.submission_id = s.id), '[]') AS consents
           FROM form_submissions s JOIN forms f ON f.instance_id = s.instance_id AND f.id = s.form_id
          WHERE s.instance_id = $1 AND s.id = $2`,
        [tenant.instanceId, submissionId, confirmDays],
      )
    ).rows[0],
  );
  if (!row) return undefined;
  return {
    tenant,
    submissionId,
    state: row.status === 'confirmed' ? 'confirmed' : row.past_window ? 'expired' : 'pending',
    formName: row.form_name,
    email: row.email,
    consents: row.consents,
    expiresAt: row.expires_at,
  };
}

export type SubmissionConfirmOutcome = 'confirmed' | 'already_confirmed' | 'expired';

export async function confirmSubmission(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  submissionId: number,
  evidence: { ip: string | null | undefined; userAgent: string | null | undefined },
  confirmDays: number,
): Promise<SubmissionConfirmOutcome | undefined> {
  return withTenant(pool, tenant, async (c) => {
    // The row lock: two confirmations at once confirm once.
    const { rows } = await c.query<{ form_id: number; status: string; past_window: boolean }>(
      `SELECT s.form_id, s.status, ${PAST_WINDOW} AS past_window FROM form_submissions s WHERE s.instance_id = $1 AND s.id = $2 FOR UPDATE`,
      [tenant.instanceId, submissionId, confirmDays],
    );
    const s = rows[0];
    if (!s) return undefined;
    if (s.status === 'confirmed') return 'already_confirmed';
    if (s.past_window) return 'expired';
    const ip = clientAddress(evidence.ip ?? undefined);
    const ua = evidence.userAgent ? evidence.userAgent.slice(0, MAX_PROOF_USER_AGENT) : null;
    const confirmed = (
      await c.query<{ confirmed_at: Date }>(
        `UPDATE form_submissions SET status = 'confirmed', confirmed_at = now(), confirmation_ip = $3::inet, confirmation_user_agent = $4
          WHERE instance_id = $1 AND id = $2 RETURNING confirmed_at`,
        [tenant.instanceId, submissionId, ip, ua],
      )
    ).rows[0]!;
    const eventIds = await confirmFormEvents(tenant, c, submissionId, confirmed.confirmed_at, { ip, userAgent: ua });
    await append(tenant, c, [
      ...eventIds.map((id) => ({ kind: 'consent.event.confirmed' as const, entityId: id, occurredAt: confirmed.confirmed_at })),
      { kind: 'form.submission.confirmed', entityId: submissionId, occurredAt: confirmed.confirmed_at },
    ]);
    // Last in the transaction: the insert leaves the tenant role (workers/machinery/queue.ts).
    await queue.insert(c, await afterConfirmationJobs(tenant, c, s.form_id, submissionId));
    return 'confirmed';
  });
}

/** A submission as its mails and the dataset feed read it. */
export interface SubmissionForJobs {
  status: string;
  form_id: number;
  form_name: string;
  form_type: 'registration' | 'update';
  dataset_id: number | null;
  values: Record<string, string | number | boolean>;
  created_at: string;
}

export async function readSubmissionForJobs(tenant: Tenant, pool: Pool, submissionId: number): Promise<SubmissionForJobs | undefined> {
  return withTenant(pool, tenant, async (c) =>
    (
      await c.query<SubmissionForJobs>(
        `SELECT s.status, s.form_id, f.name AS form_name, f.type AS form_type, f.dataset_id, s.field_values AS values, ${isoUtc('s.created_at')} AS created_at
           FROM form_submissions s JOIN forms f ON f.instance_id = s.instance_id AND f.id = s.form_id
          WHERE s.instance_id = $1 AND s.id = $2`,
        [tenant.instanceId, submissionId],
      )
    ).rows[0],
  );
}
