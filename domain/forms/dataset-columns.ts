import type { Client } from '../../sql/pool.js';
import { RuleViolation } from '../errors.js';
import type { Declaration } from '../datasets/declaration.js';
import type { Tenant } from '../tenancy/context.js';
import type { ResolvedItem } from './resolved-item.js';

/**
 * What a form must collect for the dataset it feeds (spec: form_dataset_columns_not_collected,
 * dataset_columns_not_collected_by_forms): every column the dataset declares required, and its
 * identifier (a contact without one is refused), each by a required field item. Checked from
 * both sides: when a form is pointed at a dataset or changed (definition.ts), and when a dataset's
 * declaration changes under its connected forms (connectedFormsRule, one of the dataset update
 * rules). Aligning makes the items required, or adds them at the end of the form.
 */

export interface NeededField {
  fieldId: number;
  key: string;
  name: string;
}

export interface DatasetNeeds {
  id: number;
  required: NeededField[];
}

/** The identifier and the required columns of a declaration, with their keys and names. */
async function neededFields(tenant: Tenant, c: Client, d: Declaration): Promise<NeededField[]> {
  const ids = [d.identityFieldId, ...d.columns.filter((col) => col.required).map((col) => col.field_id)];
  const { rows } = await c.query<NeededField>(
    `SELECT f.id AS "fieldId", f.field_key AS key, f.name FROM unnest($2::bigint[]) WITH ORDINALITY AS x(id, n)
       JOIN fields f ON f.instance_id = $1 AND f.id = x.id
      GROUP BY f.id, f.field_key, f.name ORDER BY min(x.n)`,
    [tenant.instanceId, ids],
  );
  return rows;
}

/** The dataset's needs, or null when the instance has no such dataset. */
export async function requiredFieldsOf(tenant: Tenant, c: Client, datasetId: number): Promise<DatasetNeeds | null> {
  const { rows } = await c.query<Declaration>(
    `SELECT channel, identity_field_id AS "identityFieldId", columns FROM datasets WHERE instance_id = $1 AND id = $2`,
    [tenant.instanceId, datasetId],
  );
  if (!rows[0]) return null;
  return { id: datasetId, required: await neededFields(tenant, c, rows[0]) };
}

/** The needed fields no required field item collects. */
export function missingRequired(items: ReadonlyArray<Pick<ResolvedItem, 'type' | 'fieldId' | 'required'>>, needs: DatasetNeeds): NeededField[] {
  const collected = new Set(items.flatMap((i) => (i.type === 'field' && i.required && i.fieldId !== null ? [i.fieldId] : [])));
  return needs.required.filter((f) => !collected.has(f.fieldId));
}

/** --align-dataset-columns: an item that collects a missing field becomes required; one absent is added at the end. */
export function alignItems(items: ResolvedItem[], missing: NeededField[]): ResolvedItem[] {
  const byField = new Map(missing.map((m) => [m.fieldId, m]));
  const aligned = items.map((i) => (i.type === 'field' && i.fieldId !== null && byField.delete(i.fieldId) ? { ...i, required: true } : i));
  for (const m of byField.values()) {
    aligned.push({ type: 'field', fieldId: m.fieldId, fieldKey: m.key, termId: null, channel: null, label: m.name, text: null, required: true });
  }
  return aligned;
}

/** What `dataset update --connected-forms` asks for when a change would leave a connected form short. */
export type ConnectedFormsChoice = 'align' | 'keep';
export const CONNECTED_FORMS_CHOICES: readonly ConnectedFormsChoice[] = ['align', 'keep'];

/**
 * The dataset update rule (domain/datasets/datasets.ts updateRules): with the new declaration,
 * each form connected to the dataset (not deleted) must still collect what it requires. Without a
 * choice: 409 dataset_columns_not_collected_by_forms naming each form and what it misses; align:
 * those forms' items are made required or added; keep: the forms stay as they are (their
 * submissions then reach the dataset only when they carry what it requires: docs/forms.md).
 */
export async function checkConnectedForms(
  tenant: Tenant,
  c: Client,
  datasetId: number,
  after: Declaration,
  choice: ConnectedFormsChoice | undefined,
): Promise<void> {
  const { rows: forms } = await c.query<{ id: number; name: string; items: Array<Pick<ResolvedItem, 'type' | 'fieldId' | 'required'>> }>(
    `SELECT f.id, f.name,
            coalesce((SELECT json_agg(json_build_object('type', i.type, 'fieldId', i.field_id, 'required', i.required))
                        FROM form_items i WHERE i.instance_id = f.instance_id AND i.form_id = f.id AND i.removed_at IS NULL), '[]') AS items
       FROM forms f WHERE f.instance_id = $1 AND f.dataset_id = $2 AND f.deleted_at IS NULL ORDER BY f.id FOR UPDATE OF f`,
    [tenant.instanceId, datasetId],
  );
  if (!forms.length) return;
  const needs: DatasetNeeds = { id: datasetId, required: await neededFields(tenant, c, after) };
  const short = forms.map((f) => ({ form: f, missing: missingRequired(f.items, needs) })).filter((s) => s.missing.length);
  if (!short.length || choice === 'keep') return;
  if (choice === undefined) {
    throw new RuleViolation(
      'dataset_columns_not_collected_by_forms',
      `the change leaves connected forms short: ${short.map((s) => `form ${s.form.id} ${JSON.stringify(s.form.name)} does not collect ${s.missing.map((m) => m.key).join(', ')} as required`).join('; ')}. ` +
        'Pass --connected-forms align (make them required in those forms) or keep (leave the forms as they are)',
      { forms: short.map((s) => ({ id: s.form.id, name: s.form.name, missing: s.missing.map((m) => m.key) })) },
    );
  }
  for (const { form, missing } of short) {
    const fieldIds = missing.map((m) => m.fieldId);
    const updated = await c.query<{ field_id: number }>(
      `UPDATE form_items SET required = true WHERE instance_id = $1 AND form_id = $2 AND type = 'field' AND removed_at IS NULL AND field_id = ANY ($3::bigint[])
       RETURNING field_id`,
      [tenant.instanceId, form.id, fieldIds],
    );
    const present = new Set(updated.rows.map((r) => r.field_id));
    const absent = missing.filter((m) => !present.has(m.fieldId));
    if (absent.length) {
      await c.query(
        `INSERT INTO form_items (instance_id, form_id, position, type, field_id, label, required)
         SELECT $1, $2, (SELECT coalesce(max(position), -1) FROM form_items WHERE instance_id = $1 AND form_id = $2) + x.n, 'field', x.id, x.label, true
           FROM unnest($3::bigint[], $4::text[]) WITH ORDINALITY AS x(id, label, n)`,
        [tenant.instanceId, form.id, absent.map((m) => m.fieldId), absent.map((m) => m.name)],
      );
    }
    await c.query('UPDATE forms SET updated_at = now() WHERE instance_id = $1 AND id = $2', [tenant.instanceId, form.id]);
  }
}
