import { randomBytes } from 'node:crypto';
import type { Client, Pool } from '../../sql/pool.js';
import { isEmailAddress } from '../email-address.js';
import { NotFoundError, RuleViolation, ValidationFailed, type FieldError } from '../errors.js';
import { uniquelyNamed, type NameIndex } from '../unique-names.js';
import { SYSTEM_FIELD_KEYS } from '../fields/types.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { alignItems, missingRequired, requiredFieldsOf, type DatasetNeeds } from './dataset-columns.js';
import type { HostedItem } from './hosted-page.js';
import { CHANNEL_FIELD, readForm, type Form, type FormConsentChannel, type FormItemType, type FormKind, type FormSettings, type FormType } from './read.js';
import type { ResolvedItem } from './resolved-item.js';

/**
 * Form definitions (panel-only: cartero form create|update|activate|deactivate|delete). The file
 * is the whole definition (api/schemas/forms.ts formDefinitionSchema checks its shape first); an
 * update replaces it whole, keeping the id of each item it names by id. Checks, in order:
 *  1. 422 with every reference that does not resolve, together: an unknown or inactive
 *     field_key (or one repeated), an unknown term or a channel the term does not have, a field
 *     other than the identifiers (email, phone) in a consent-kind form, an item id that is not one
 *     of this form's, an unknown dataset, sender or template, a malformed team address;
 *  2. 409 consent_channel_not_covered: a consent item's channel has no field of the matching key
 *     (mail: email; sms, wsp: phone) in the form;
 *  3. 409 form_confirmation_email_missing: double confirmation needs a required email field
 *     (the confirmation mail goes there);
 *  4. 409 form_dataset_columns_not_collected: the fed dataset requires a column (or its
 *     identifier) that no required field item collects, unless alignDatasetColumns (then the
 *     items are made required, or added at the end);
 *  5. 409 form_name_taken (the unique index: ignoring case and accents, deleted forms' names free).
 * A rename also renames the form in its consent events (spec: form_name as the form is now).
 */

export interface FormItemInput {
  /** An existing item of this form (update): kept with its id. */
  id?: number;
  type: FormItemType;
  field_key?: string;
  term_id?: number;
  channel?: FormConsentChannel;
  label?: string;
  text?: string;
  required?: boolean;
}

export interface FormDefinitionInput {
  name: string;
  kind: FormKind;
  type: FormType;
  dataset_id?: number | null;
  requires_confirmation?: boolean;
  auto_reply_sender_id?: number | null;
  auto_reply?: { subject?: string; html?: string; text?: string; template_id?: number } | null;
  team_notice_emails?: string[];
  settings?: FormSettings | null;
  is_default?: boolean;
  is_active?: boolean;
  items: FormItemInput[];
}

const IDENTITY_KEYS: readonly string[] = SYSTEM_FIELD_KEYS;

interface Catalog {
  fields: Map<string, { id: number; is_active: boolean; name: string }>;
  terms: Map<number, { channels: string[]; current_version_id: number | null }>;
  existingItems: Set<number>;
  dataset: DatasetNeeds | null;
  senderOk: boolean;
  templateOk: boolean;
}

async function catalog(tenant: Tenant, c: Client, input: FormDefinitionInput, formId: number | null): Promise<Catalog> {
  const keys = input.items.flatMap((i) => (i.field_key ? [i.field_key] : []));
  const termIds = input.items.flatMap((i) => (i.term_id ? [i.term_id] : []));
  const { rows } = await c.query<{
    fields: Array<{ key: string; id: number; is_active: boolean; name: string }>;
    terms: Array<{ id: number; channels: string[]; current_version_id: number | null }>;
    items: number[];
    sender_ok: boolean;
    template_ok: boolean;
  }>(
    `SELECT coalesce((SELECT json_agg(json_build_object('key', field_key, 'id', id, 'is_active', is_active, 'name', name)) FROM fields
                       WHERE instance_id = $1 AND field_key = ANY ($2::text[]) AND deleted_at IS NULL), '[]') AS fields,
            coalesce((SELECT json_agg(json_build_object('id', t.id, 'channels', t.channels,
                                                        'current_version_id', (SELECT v.id FROM consent_term_versions v
                                                                                WHERE v.instance_id = t.instance_id AND v.term_id = t.id AND v.is_current)))
                        FROM consent_terms t WHERE t.instance_id = $1 AND t.id = ANY ($3::bigint[])), '[]') AS terms,
            coalesce((SELECT json_agg(id) FROM form_items WHERE instance_id = $1 AND form_id = $4 AND removed_at IS NULL), '[]') AS items,
            ($5::bigint IS NULL OR EXISTS (SELECT 1 FROM senders WHERE instance_id = $1 AND id = $5)) AS sender_ok,
            ($6::bigint IS NULL OR EXISTS (SELECT 1 FROM mail_templates WHERE instance_id = $1 AND id = $6 AND deleted_at IS NULL)) AS template_ok`,
    [tenant.instanceId, keys, termIds, formId, input.auto_reply_sender_id ?? null, input.auto_reply?.template_id ?? null],
  );
  const r = rows[0]!;
  return {
    fields: new Map(r.fields.map((f) => [f.key, f])),
    terms: new Map(r.terms.map((t) => [t.id, t])),
    existingItems: new Set(r.items),
    dataset: input.dataset_id ? await requiredFieldsOf(tenant, c, input.dataset_id) : null,
    senderOk: r.sender_ok,
    templateOk: r.template_ok,
  };
}

/** Check 1: every reference, all failures together. */
function resolveItems(input: FormDefinitionInput, cat: Catalog): ResolvedItem[] {
  const errors: FieldError[] = [];
  const seenKeys = new Map<string, number>();
  const seenIds = new Set<number>();
  const items = input.items.map((item, i): ResolvedItem => {
    const at = `/items/${i}`;
    if (item.id !== undefined) {
      if (!cat.existingItems.has(item.id) || seenIds.has(item.id)) {
        errors.push({ pointer: `${at}/id`, code: 'value_error.item_not_found', message: `Item ${item.id} is not an item of this form (or is named twice)` });
      }
      seenIds.add(item.id);
    }
    const base: ResolvedItem = {
      id: item.id, type: item.type, fieldId: null, fieldKey: null, termId: null, channel: null,
      label: item.label ?? null, text: null, required: item.required ?? false,
    };
    switch (item.type) {
      case 'field': {
        const key = item.field_key ?? '';
        const field = cat.fields.get(key);
        if (item.field_key === undefined) {
          errors.push({ pointer: `${at}/field_key`, code: 'missing', message: 'A field item needs its field_key' });
        } else if (!field || !field.is_active) {
          errors.push({ pointer: `${at}/field_key`, code: 'value_error.field_not_found', message: `No active catalog field has field_key ${JSON.stringify(key)}` });
        } else if (seenKeys.has(key)) {
          errors.push({ pointer: `${at}/field_key`, code: 'value_error.field_duplicated', message: `Field ${key} is already collected by /items/${seenKeys.get(key)}` });
        } else if (input.kind === 'consent' && !IDENTITY_KEYS.includes(key)) {
          errors.push({ pointer: `${at}/field_key`, code: 'value_error.field_not_in_consent_form', message: `A consent form collects only identifiers (${IDENTITY_KEYS.join(', ')}) and consents` });
        }
        seenKeys.set(key, i);
        return { ...base, fieldId: field?.id ?? null, fieldKey: key, label: item.label ?? field?.name ?? key };
      }
      case 'consent': {
        const term = item.term_id === undefined ? undefined : cat.terms.get(item.term_id);
        if (!term) {
          errors.push(
            item.term_id === undefined
              ? { pointer: `${at}/term_id`, code: 'missing', message: 'A consent item needs its term_id' }
              : { pointer: `${at}/term_id`, code: 'value_error.term_not_found', message: `No consent term ${item.term_id}` },
          );
          return base;
        }
        // The channel the consent is given on: as declared, else mail when the term has it, else its first of sms, wsp.
        const channel = item.channel ?? (['mail', 'sms', 'wsp'] as const).find((ch) => term.channels.includes(ch));
        if (!channel || !term.channels.includes(channel)) {
          errors.push({ pointer: `${at}/channel`, code: 'value_error.channel_not_in_term', message: `Term ${item.term_id} has no channel ${channel ?? 'among mail, sms, wsp'}`, params: { channels: term.channels.join(', ') } });
        }
        return { ...base, termId: item.term_id!, channel: channel ?? 'mail' };
      }
      case 'text':
        if (!item.text) errors.push({ pointer: `${at}/text`, code: 'missing', message: 'A text item needs its text' });
        return { ...base, label: null, required: false, text: item.text ?? '' };
      case 'separator':
        return { ...base, label: null, required: false };
    }
  });
  if (input.dataset_id && !cat.dataset) errors.push({ pointer: '/dataset_id', code: 'value_error.dataset_not_found', message: `No dataset ${input.dataset_id}` });
  if (!cat.senderOk) errors.push({ pointer: '/auto_reply_sender_id', code: 'value_error.sender_not_found', message: `No sender ${input.auto_reply_sender_id}` });
  if (!cat.templateOk) errors.push({ pointer: '/auto_reply/template_id', code: 'value_error.template_not_found', message: `No template ${input.auto_reply?.template_id}` });
  (input.team_notice_emails ?? []).forEach((email, i) => {
    if (!isEmailAddress(email)) errors.push({ pointer: `/team_notice_emails/${i}`, code: 'value_error.email', message: 'Not an email address' });
  });
  if (errors.length) throw new ValidationFailed(errors);
  return items;
}

/** Checks 2 to 4 (4 applies the alignment when asked); returns the items to write. */
function checkRules(input: FormDefinitionInput, items: ResolvedItem[], cat: Catalog, alignDatasetColumns: boolean): ResolvedItem[] {
  const keys = new Set(items.flatMap((i) => (i.type === 'field' && i.fieldKey ? [i.fieldKey] : [])));
  items.forEach((item, i) => {
    if (item.type === 'consent' && item.channel && !keys.has(CHANNEL_FIELD[item.channel])) {
      throw new RuleViolation(
        'consent_channel_not_covered',
        `items/${i}: the consent is on channel ${item.channel}, but the form has no ${CHANNEL_FIELD[item.channel]} field to identify the contact on it`,
        { pointer: `/items/${i}` },
      );
    }
  });
  if (input.requires_confirmation && !items.some((i) => i.type === 'field' && i.fieldKey === 'email' && i.required)) {
    throw new RuleViolation('form_confirmation_email_missing', 'a form that requires confirmation needs a required email field: the confirmation mail is sent there');
  }
  if (!cat.dataset) return items;
  const missing = missingRequired(items, cat.dataset);
  if (!missing.length) return items;
  if (!alignDatasetColumns) {
    throw new RuleViolation(
      'form_dataset_columns_not_collected',
      `dataset ${cat.dataset.id} requires ${missing.map((m) => m.key).join(', ')}, which the form does not collect as required items; make them required items or pass --align-dataset-columns`,
      { columns: missing.map((m) => m.key) },
    );
  }
  return alignItems(items, missing);
}

/** The name unique index is the one judge of a name collision. */
const FORM_NAME: NameIndex = { constraint: 'forms_name_key', code: 'form_name_taken', noun: 'form' };
const naming = <T>(name: string, write: () => Promise<T>): Promise<T> => uniquelyNamed(FORM_NAME, name, write);

function formColumns(input: FormDefinitionInput, name: string): unknown[] {
  const reply = input.auto_reply ?? null;
  return [
    name, input.kind, input.type, input.dataset_id ?? null, input.requires_confirmation ?? false, input.auto_reply_sender_id ?? null,
    reply?.subject ?? null, reply?.html ?? null, reply?.text ?? null, reply?.template_id ?? null,
    input.team_notice_emails ?? [], input.settings ? JSON.stringify(input.settings) : null, input.is_default ?? false,
  ];
}

/** One default form per instance: making this one the default clears the others'. */
async function keepOneDefault(tenant: Tenant, c: Client, input: FormDefinitionInput, formId: number | null): Promise<void> {
  if (input.is_default) {
    await c.query('UPDATE forms SET is_default = false, updated_at = now() WHERE instance_id = $1 AND is_default AND id IS DISTINCT FROM $2', [tenant.instanceId, formId]);
  }
}

/** The items in display order: kept ones updated in place, new ones inserted, the rest marked removed. */
async function writeItems(tenant: Tenant, c: Client, formId: number, items: ResolvedItem[]): Promise<void> {
  const kept = items.flatMap((i) => (i.id !== undefined ? [i.id] : []));
  await c.query('UPDATE form_items SET removed_at = now() WHERE instance_id = $1 AND form_id = $2 AND removed_at IS NULL AND NOT (id = ANY ($3::bigint[]))', [
    tenant.instanceId, formId, kept,
  ]);
  for (const [position, item] of items.entries()) {
    const values = [tenant.instanceId, formId, position, item.type, item.fieldId, item.termId, item.channel, item.label, item.text, item.required];
    if (item.id !== undefined) {
      await c.query(
        `UPDATE form_items SET position = $3, type = $4, field_id = $5, term_id = $6, channel = $7, label = $8, text = $9, required = $10
          WHERE instance_id = $1 AND form_id = $2 AND id = $11`,
        [...values, item.id],
      );
    } else {
      await c.query(
        `INSERT INTO form_items (instance_id, form_id, position, type, field_id, term_id, channel, label, text, required)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        values,
      );
    }
  }
}

async function shown(tenant: Tenant, c: Client, id: number): Promise<Form> {
  const form = await readForm(tenant, c, id);
  if (!form) throw new NotFoundError('form', id);
  return form;
}

export interface DefinitionOptions {
  /** --align-dataset-columns: make the items the dataset requires required (added when absent) instead of refusing. */
  alignDatasetColumns?: boolean;
}

/** cartero form create: prints the form as GET /v1/forms/{id} shows it. */
export async function createForm(tenant: Tenant, pool: Pool, input: FormDefinitionInput, opts: DefinitionOptions = {}): Promise<Form> {
  const name = input.name.trim();
  return naming(name, () =>
    withTenant(pool, tenant, async (c) => {
      const cat = await catalog(tenant, c, input, null);
      const items = checkRules(input, resolveItems({ ...input, items: input.items.map(({ id: _, ...i }) => i) }, cat), cat, opts.alignDatasetColumns ?? false);
      await keepOneDefault(tenant, c, input, null);
      const { rows } = await c.query<{ id: number }>(
        `INSERT INTO forms (instance_id, name, kind, type, dataset_id, requires_confirmation, auto_reply_sender_id, auto_reply_subject, auto_reply_html,
                            auto_reply_text, auto_reply_template_id, team_notice_emails, settings, is_default, is_active, public_token)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
        [tenant.instanceId, ...formColumns(input, name), input.is_active ?? true, randomBytes(18).toString('base64url')],
      );
      const id = rows[0]!.id;
      await writeItems(tenant, c, id, items);
      return shown(tenant, c, id);
    }),
  );
}

/** A definition's form as its hosted page reads it (draftForm). */
export interface DraftForm {
  name: string;
  settings: FormSettings | null;
  items: HostedItem[];
}

/** A resolved item as GET /v1/forms/{id} would show it once written, numbered `id`. */
function shownItem(item: ResolvedItem, id: number, cat: Catalog): HostedItem {
  switch (item.type) {
    case 'field':
      return { id, type: 'field', field_key: item.fieldKey ?? '', label: item.label, required: item.required };
    case 'consent':
      return {
        id, type: 'consent', term_id: item.termId ?? 0, term_version_id: cat.terms.get(item.termId ?? 0)?.current_version_id ?? null,
        channel: item.channel ?? 'mail', label: item.label, required: item.required,
      };
    case 'separator':
      return { id, type: 'separator' };
    case 'text':
      return { id, type: 'text', text: item.text ?? '' };
  }
}

/**
 * The form a definition describes, written nowhere: what the panel's preview of the hosted page
 * draws (POST /v1/private/forms/preview). Check 1 exactly as createForm makes it (the same 422s:
 * nothing can be drawn from a reference that does not resolve, and the builder learns of them as
 * it goes); checks 2 to 5 are the save's, so a page can be seen while it is being built (a consent
 * item added before the email field). alignDatasetColumns adds the dataset's missing columns as
 * the save would. Items are numbered by position: they have no id until written.
 */
export async function draftForm(tenant: Tenant, pool: Pool, input: FormDefinitionInput, opts: DefinitionOptions = {}): Promise<DraftForm> {
  const asNew = { ...input, items: input.items.map(({ id: _, ...i }) => i) };
  return withTenant(pool, tenant, async (c) => {
    const cat = await catalog(tenant, c, asNew, null);
    let items = resolveItems(asNew, cat);
    if (opts.alignDatasetColumns && cat.dataset) items = alignItems(items, missingRequired(items, cat.dataset));
    return { name: input.name.trim(), settings: input.settings ?? null, items: items.map((item, i) => shownItem(item, i + 1, cat)) };
  });
}

/** cartero form update --file: the file replaces the whole definition; items named by id keep it. */
export async function updateForm(tenant: Tenant, pool: Pool, id: number, input: FormDefinitionInput, opts: DefinitionOptions = {}): Promise<Form> {
  const name = input.name.trim();
  return naming(name, () =>
    withTenant(pool, tenant, async (c) => {
      const { rows } = await c.query<{ name: string }>('SELECT name FROM forms WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE', [
        tenant.instanceId, id,
      ]);
      if (!rows[0]) throw new NotFoundError('form', id);
      const cat = await catalog(tenant, c, input, id);
      const items = checkRules(input, resolveItems(input, cat), cat, opts.alignDatasetColumns ?? false);
      await keepOneDefault(tenant, c, input, id);
      await c.query(
        `UPDATE forms SET name = $3, kind = $4, type = $5, dataset_id = $6, requires_confirmation = $7, auto_reply_sender_id = $8, auto_reply_subject = $9,
                          auto_reply_html = $10, auto_reply_text = $11, auto_reply_template_id = $12, team_notice_emails = $13, settings = $14,
                          is_default = $15, is_active = coalesce($16, is_active), updated_at = now()
          WHERE instance_id = $1 AND id = $2`,
        [tenant.instanceId, id, ...formColumns(input, name), input.is_active ?? null],
      );
      await writeItems(tenant, c, id, items);
      if (rows[0].name !== name) {
        await c.query('UPDATE consent_events SET form_name = $3 WHERE instance_id = $1 AND form_id = $2', [tenant.instanceId, id, name]);
      }
      return shown(tenant, c, id);
    }),
  );
}

/** cartero form activate|deactivate: a deactivated form answers 404 form_not_found to submissions. */
export async function setFormActive(tenant: Tenant, pool: Pool, id: number, active: boolean): Promise<Form> {
  return withTenant(pool, tenant, async (c) => {
    const { rowCount } = await c.query('UPDATE forms SET is_active = $3, updated_at = now() WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL', [
      tenant.instanceId, id, active,
    ]);
    if (!rowCount) throw new NotFoundError('form', id);
    return shown(tenant, c, id);
  });
}

/**
 * cartero form delete: the form leaves every listing and stops accepting submissions; its row
 * stays (its submissions and consent events name it; form_name keeps its last name) and its
 * name is free again.
 */
export async function deleteForm(tenant: Tenant, pool: Pool, id: number): Promise<{ id: number; deleted: true }> {
  return withTenant(pool, tenant, async (c) => {
    const { rowCount } = await c.query(
      `UPDATE forms SET deleted_at = now(), is_active = false, is_default = false, updated_at = now()
        WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [tenant.instanceId, id],
    );
    if (!rowCount) throw new NotFoundError('form', id);
    return { id, deleted: true };
  });
}
