import type { Pool } from '../../sql/pool.js';
import { formulaGuard } from '../../engines/csv/formula-guard.js';
import { NotFoundError } from '../errors.js';
import { toPage, window, type Page, type PageRequest } from '../pagination.js';
import { withTenant, type Tenant } from '../tenancy/context.js';

/**
 * A form's submissions as the panel shows them (docs/panel.md, Forms): newest first, each with
 * its source (form: the hosted page; form_api: the API), its status, the values it collected and
 * the consent events it produced (term, the frozen version, their status). No public route has
 * them (the spec's API submits, it does not list); the panel reads them for any member and
 * exports them as CSV (formula-guarded text cells).
 */

export interface SubmissionConsent {
  event_id: number;
  term_id: number;
  term_version_id: number;
  status: string;
}

export interface SubmissionRow {
  id: number;
  source: 'form' | 'form_api';
  status: 'pending' | 'confirmed';
  field_values: Record<string, unknown>;
  consents: SubmissionConsent[];
  created_at: string;
  confirmed_at: string | null;
}

/** The most rows one CSV export holds (newest first). */
export const MAX_SUBMISSION_EXPORT = 100_000;

async function rows(tenant: Tenant, pool: Pool, formId: number, limit: number, offset: number): Promise<SubmissionRow[]> {
  return withTenant(pool, tenant, async (c) => {
    const form = await c.query('SELECT 1 FROM forms WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL', [tenant.instanceId, formId]);
    if (!form.rowCount) throw new NotFoundError('form', formId);
    const { rows: found } = await c.query<SubmissionRow>(
      `SELECT s.id::int AS id, s.source, s.status, s.field_values,
              coalesce((SELECT json_agg(json_build_object('event_id', e.id, 'term_id', e.term_id, 'term_version_id', e.term_version_id, 'status', e.status)
                                         ORDER BY e.id)
                          FROM consent_events e WHERE e.instance_id = s.instance_id AND e.submission_id = s.id), '[]') AS consents,
              to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
              to_char(s.confirmed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS confirmed_at
         FROM form_submissions s
        WHERE s.instance_id = $1 AND s.form_id = $2
        ORDER BY s.id DESC LIMIT $3 OFFSET $4`,
      [tenant.instanceId, formId, limit, offset],
    );
    return found;
  });
}

/** A page of a form's submissions, newest first; 404 form_not_found for a form the instance does not have (or deleted). */
export async function listSubmissions(tenant: Tenant, pool: Pool, formId: number, req: PageRequest): Promise<Page<SubmissionRow>> {
  const { limit, offset } = window(req);
  return toPage(await rows(tenant, pool, formId, limit, offset), req, null);
}

function cell(value: string): string {
  const guarded = formulaGuard(value);
  return /[",\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** The CSV export: UTF-8 BOM, a header row, one line per submission (at most MAX_SUBMISSION_EXPORT, newest first). */
export async function submissionsCsv(tenant: Tenant, pool: Pool, formId: number): Promise<string> {
  const found = await rows(tenant, pool, formId, MAX_SUBMISSION_EXPORT, 0);
  const keys = [...new Set(found.flatMap((r) => Object.keys(r.field_values)))].sort();
  const header = ['id', 'created_at', 'source', 'status', 'confirmed_at', ...keys, 'consents'];
  const lines = found.map((r) =>
    [
      String(r.id), r.created_at, r.source, r.status, r.confirmed_at ?? '',
      ...keys.map((k) => { const v = r.field_values[k]; return v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v); }),
      r.consents.map((e) => `term ${e.term_id} version ${e.term_version_id}: ${e.status}`).join('; '),
    ].map(cell).join(','),
  );
  return `\uFEFF${[header.map(cell).join(','), ...lines].join('\r\n')}\r\n`;
}

/**
 * What GET /v1/forms/{id} does not show of a definition and `form update` replaces (the
 * auto-reply and the team notice addresses): the panel's builder reads them so that a save keeps
 * them. 404 form_not_found.
 */
export interface FormMailSettings {
  auto_reply: { subject?: string; html?: string; text?: string; template_id?: number } | null;
  team_notice_emails: string[];
}

export async function formMailSettings(tenant: Tenant, pool: Pool, formId: number): Promise<FormMailSettings> {
  return withTenant(pool, tenant, async (c) => {
    const { rows: found } = await c.query<{ subject: string | null; html: string | null; text: string | null; template_id: number | null; team: string[] }>(
      `SELECT auto_reply_subject AS subject, auto_reply_html AS html, auto_reply_text AS text, auto_reply_template_id::int AS template_id,
              team_notice_emails AS team
         FROM forms WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [tenant.instanceId, formId],
    );
    const r = found[0];
    if (!r) throw new NotFoundError('form', formId);
    const reply = Object.fromEntries(Object.entries({ subject: r.subject, html: r.html, text: r.text, template_id: r.template_id }).filter(([, v]) => v !== null));
    return { auto_reply: Object.keys(reply).length ? reply : null, team_notice_emails: r.team };
  });
}
