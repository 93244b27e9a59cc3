import { isoUtc } from '../../sql/iso-time.js';
import type { Client, Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';
import type { Page, PageRequest } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import { loadTenant } from '../tenancy/instances.js';
import { withTenant, type Tenant } from '../tenancy/context.js';

/**
 * Forms as the API shows them (spec: Form; GET /v1/forms and GET /v1/forms/{id}), and the hosted
 * page's lookup by public token. Every item carries id and type; a field its field_key, the
 * catalog type (and options for a select), label and required; a consent item its term, the
 * term's current version (what a submission must send as term_version_id), its channel, label and
 * required; a text block its text; a separator nothing more. docs/forms.md.
 */

export type FormKind = 'consent' | 'advanced';
export type FormType = 'registration' | 'update';
export const FORM_KINDS: readonly FormKind[] = ['consent', 'advanced'];
export const FORM_TYPES: readonly FormType[] = ['registration', 'update'];
export const FORM_ITEM_TYPES = ['field', 'consent', 'separator', 'text'] as const;
export type FormItemType = (typeof FORM_ITEM_TYPES)[number];
/** The channels a consent item may carry, each identified by one catalog field (CHANNEL_FIELD). */
export const FORM_CONSENT_CHANNELS = ['mail', 'sms', 'wsp'] as const;
export type FormConsentChannel = (typeof FORM_CONSENT_CHANNELS)[number];
/** The field_key that identifies a contact on each channel (mail: email; sms, wsp: phone). */
export const CHANNEL_FIELD: Record<FormConsentChannel, string> = { mail: 'email', sms: 'phone', wsp: 'phone' };

export type FormItem =
  | { id: number; type: 'field'; field_key: string; field_type: string; options: string[] | null; label: string | null; required: boolean }
  | { id: number; type: 'consent'; term_id: number; term_version_id: number | null; channel: FormConsentChannel; label: string | null; required: boolean }
  | { id: number; type: 'separator' }
  | { id: number; type: 'text'; text: string };

export interface FormSettings {
  title?: string;
  header_text?: string;
  footer_text?: string;
  design?: { primary_color?: string; secondary_color?: string; logo_url?: string; custom_css?: string };
}

export interface Form {
  id: number;
  name: string;
  kind: FormKind;
  type: FormType;
  dataset_id: number | null;
  public_token: string;
  is_default: boolean;
  is_active: boolean;
  requires_confirmation: boolean;
  auto_reply_sender_id: number | null;
  settings: FormSettings | null;
  created_at: string;
  updated_at: string;
  items: FormItem[];
}

/** The form columns as the API shows them, for `f` (forms), items in display order. */
export const FORM_COLUMNS = `f.id, f.name, f.kind, f.type, f.dataset_id, f.public_token, f.is_default, f.is_active,
  f.requires_confirmation, f.auto_reply_sender_id, f.settings, ${isoUtc('f.created_at')} AS created_at, ${isoUtc('f.updated_at')} AS updated_at,
  coalesce((SELECT json_agg(CASE i.type
      WHEN 'field' THEN json_build_object('id', i.id, 'type', i.type, 'field_key', fl.field_key, 'field_type', fl.type, 'options', fl.options,
                                          'label', i.label, 'required', i.required)
      WHEN 'consent' THEN json_build_object('id', i.id, 'type', i.type, 'term_id', i.term_id,
                                            'term_version_id', (SELECT v.id FROM consent_term_versions v
                                                                 WHERE v.instance_id = i.instance_id AND v.term_id = i.term_id AND v.is_current),
                                            'channel', i.channel, 'label', i.label, 'required', i.required)
      WHEN 'separator' THEN json_build_object('id', i.id, 'type', i.type)
      ELSE json_build_object('id', i.id, 'type', i.type, 'text', i.text) END ORDER BY i.position)
     FROM form_items i LEFT JOIN fields fl ON fl.instance_id = i.instance_id AND fl.id = i.field_id
    WHERE i.instance_id = f.instance_id AND i.form_id = f.id AND i.removed_at IS NULL), '[]') AS items`;

/** One form (deleted ones never), in the caller's tenant transaction; null when there is none. */
export async function readForm(tenant: Tenant, c: Client, formId: number): Promise<Form | null> {
  const { rows } = await c.query<Form>(`SELECT ${FORM_COLUMNS} FROM forms f WHERE f.instance_id = $1 AND f.id = $2 AND f.deleted_at IS NULL`, [
    tenant.instanceId,
    formId,
  ]);
  return rows[0] ?? null;
}

/** GET /v1/forms/{id}: the form, active or not, or null (missing, deleted, another instance's). */
export async function getForm(tenant: Tenant, pool: Pool, formId: number): Promise<Form | null> {
  return withTenant(pool, tenant, (c) => readForm(tenant, c, formId));
}

/**
 * The hosted page's form (GET/POST /f/{public_token}): the tenant it belongs to and the form as
 * GET /v1/forms/{id} shows it; null for an unknown token and for an inactive or deleted form (the
 * page answers both alike). The token is looked up as the service (it names the tenant), then the
 * form is read as that tenant.
 */
export async function getFormByPublicToken(pool: Pool, publicToken: string): Promise<{ tenant: Tenant; form: Form } | null> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(publicToken)) return null;
  const { rows } = await query<{ instance_id: number; id: number }>(
    pool,
    'SELECT instance_id, id FROM forms WHERE public_token = $1 AND is_active AND deleted_at IS NULL',
    [publicToken],
  );
  const row = rows[0];
  if (!row) return null;
  const tenant = await loadTenant(pool, row.instance_id);
  if (!tenant) return null;
  const form = await getForm(tenant, pool, row.id);
  return form && form.is_active ? { tenant, form } : null;
}

/** GET /v1/forms's filters (spec); omitted = no filter. */
export interface FormFilter extends PageRequest {
  kind?: FormKind;
  type?: FormType;
  is_active?: boolean;
  /** Partial, case-insensitive. */
  name?: string;
  requires_confirmation?: boolean;
  auto_reply_sender_id?: number;
}

/** GET /v1/forms: oldest first, counted (an instance has few forms). */
export async function listForms(tenant: Tenant, pool: Pool, f: FormFilter): Promise<Page<Form>> {
  const { limit, offset } = window(f);
  const where = `f.instance_id = $1 AND f.deleted_at IS NULL
      AND ($2::text IS NULL OR f.kind = $2) AND ($3::text IS NULL OR f.type = $3) AND ($4::boolean IS NULL OR f.is_active = $4)
      AND ($5::text IS NULL OR strpos(lower(f.name), lower($5)) > 0) AND ($6::boolean IS NULL OR f.requires_confirmation = $6)
      AND ($7::bigint IS NULL OR f.auto_reply_sender_id = $7)`;
  const values = [
    tenant.instanceId, f.kind ?? null, f.type ?? null, f.is_active ?? null, f.name ?? null, f.requires_confirmation ?? null, f.auto_reply_sender_id ?? null,
  ];
  return withTenant(pool, tenant, async (c) => {
    const rows = await c.query<Form & { total_count: number }>(
      `SELECT ${FORM_COLUMNS}, count(*) OVER ()::int AS total_count FROM forms f WHERE ${where} ORDER BY f.id LIMIT $8 OFFSET $9`,
      [...values, limit, offset],
    );
    return toCountedPage(rows.rows, f, countWith(c, `SELECT count(*)::int AS n FROM forms f WHERE ${where}`, values));
  });
}
