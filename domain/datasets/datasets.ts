import { isoUtc } from '../../sql/iso-time.js';
import type { Client, Pool } from '../../sql/pool.js';
import { AppError, NotFoundError, RuleViolation } from '../errors.js';
import { uniquelyNamed, type NameIndex } from '../unique-names.js';
import { fieldsById } from '../fields/catalog.js';
import type { FieldDefinition } from '../fields/types.js';
import type { Page, PageRequest } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { checkConnectedForms, type ConnectedFormsChoice } from '../forms/dataset-columns.js';
import { resolveDeclaration, type ColumnInput, type DatasetChannel, type Declaration } from './declaration.js';

/** A dataset as GET /v1/datasets lists it (spec: the listing omits the identifier and the columns). */
export interface Dataset {
  id: number;
  name: string;
  is_active: boolean;
  channel: DatasetChannel[] | null;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** A dataset as GET /v1/datasets/{id} shows it, and every CLI dataset command prints. */
export interface DatasetDetail extends Dataset {
  identity_field: string;
  columns: Array<{ field_key: string; required: boolean }>;
}

export const DATASET_LIMITS = { name: 255, description: 5000 } as const;

const SUMMARY = `d.id, d.name, d.is_active, d.channel, d.description, ${isoUtc('d.created_at')} AS created_at, ${isoUtc('d.updated_at')} AS updated_at`;

// The declaration read back by key, in declared order, from the stored field ids.
const DETAIL = `${SUMMARY},
  (SELECT f.field_key FROM fields f WHERE f.instance_id = d.instance_id AND f.id = d.identity_field_id) AS identity_field,
  (SELECT coalesce(json_agg(json_build_object('field_key', f.field_key, 'required', (col->>'required')::boolean) ORDER BY n), '[]')
     FROM jsonb_array_elements(d.columns) WITH ORDINALITY AS x(col, n)
     JOIN fields f ON f.instance_id = d.instance_id AND f.id = (col->>'field_id')::bigint) AS columns`;

/** GET /v1/datasets: oldest first. */
export async function listDatasets(tenant: Tenant, pool: Pool, page: PageRequest): Promise<Page<Dataset>> {
  const { limit, offset } = window(page);
  return withTenant(pool, tenant, async (c) => {
    const rows = await c.query<Dataset & { total_count: number }>({
      name: 'datasets-page',
      text: `SELECT ${SUMMARY}, count(*) OVER ()::int AS total_count FROM datasets d WHERE d.instance_id = $1 ORDER BY d.id LIMIT $2 OFFSET $3`,
      values: [tenant.instanceId, limit, offset],
    });
    return toCountedPage(rows.rows, page, countWith(c, 'SELECT count(*)::int AS n FROM datasets WHERE instance_id = $1', [tenant.instanceId]));
  });
}

async function readDetail(tenant: Tenant, c: Client, id: number): Promise<DatasetDetail> {
  const { rows } = await c.query<DatasetDetail>(`SELECT ${DETAIL} FROM datasets d WHERE d.instance_id = $1 AND d.id = $2`, [tenant.instanceId, id]);
  if (!rows[0]) throw new NotFoundError('dataset', id);
  return rows[0];
}

/** GET /v1/datasets/{id}; 404 dataset_not_found for an id of another instance as for none. */
export async function getDataset(tenant: Tenant, pool: Pool, id: number): Promise<DatasetDetail> {
  return withTenant(pool, tenant, (c) => readDetail(tenant, c, id));
}

function checkTexts(name: string | undefined, description: string | null | undefined): void {
  if (name !== undefined && (!name || [...name].length > DATASET_LIMITS.name)) {
    throw new AppError('invalid_name', `a dataset needs a name of 1 to ${DATASET_LIMITS.name} characters`);
  }
  if (description && [...description].length > DATASET_LIMITS.description) {
    throw new AppError('invalid_description', `a description has at most ${DATASET_LIMITS.description} characters`);
  }
}

/** The name unique index (sql/migrations/014) is the one judge of a name collision. */
const DATASET_NAME: NameIndex = { constraint: 'datasets_name_key', code: 'dataset_name_taken', noun: 'dataset' };
const naming = <T>(name: string | undefined, write: () => Promise<T>): Promise<T> => uniquelyNamed(DATASET_NAME, name ?? '', write);

export interface DatasetInput {
  name: string;
  description?: string | null;
  channel: DatasetChannel[] | null;
  identityField?: string | null;
  columns: ColumnInput[];
}

/** Create a dataset (panel-only). */
export async function createDataset(tenant: Tenant, pool: Pool, input: DatasetInput): Promise<DatasetDetail> {
  const name = input.name.trim();
  checkTexts(name, input.description);
  return naming(name, () =>
    withTenant(pool, tenant, async (c) => {
      const d = await resolveDeclaration(tenant, c, { channel: input.channel, identityField: input.identityField ?? null, columns: input.columns });
      const { rows } = await c.query<{ id: number }>(
        `INSERT INTO datasets (instance_id, name, description, channel, identity_field_id, columns)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [tenant.instanceId, name, input.description || null, d.channel, d.identityFieldId, JSON.stringify(d.columns)],
      );
      return readDetail(tenant, c, rows[0]!.id);
    }),
  );
}

/**
 * A change to a dataset (panel-only): each property given replaces the stored one, the rest stay.
 * channel, identityField and columns are one declaration: changing any re-checks it whole
 * (resolveDeclaration). description null empties it.
 */
export interface DatasetChange {
  name?: string;
  description?: string | null;
  channel?: DatasetChannel[] | null;
  identityField?: string | null;
  columns?: ColumnInput[];
  /**
   * What to do with connected forms the new declaration leaves short (spec: connected_forms):
   * align them, or keep them as they are; absent, such a change is refused.
   */
  connectedForms?: ConnectedFormsChoice;
}

/** The dataset row as an update sees it, locked. */
export interface StoredDataset extends Declaration {
  id: number;
  name: string;
  description: string | null;
  hasRecords: boolean;
}

/**
 * One rule an update must keep, run after the new declaration is resolved and before it is
 * written, inside the update's transaction with the dataset row locked. A later issue's rule
 * (forms: the columns a connected form must collect) is one more entry of updateRules.
 */
export type DatasetUpdateRule = (ctx: {
  tenant: Tenant;
  client: Client;
  before: StoredDataset;
  after: Declaration;
  change: DatasetChange;
}) => Promise<void>;

/**
 * Records are keyed by the identifier: once a dataset holds contacts, another identity field
 * would make every stored key mean something else.
 */
const identityKept: DatasetUpdateRule = async ({ before, after }) => {
  if (before.hasRecords && before.identityFieldId !== after.identityFieldId) {
    throw new RuleViolation('dataset_identity_field_locked', 'the dataset holds contacts keyed by its identity field, which can no longer change');
  }
};

/**
 * A declaration change must not leave a connected form without a required item for a column the
 * dataset now requires (409 dataset_columns_not_collected_by_forms unless connectedForms says
 * align or keep: domain/forms/dataset-columns.ts). Only a declaration change is judged.
 */
const connectedFormsCollect: DatasetUpdateRule = async ({ tenant, client, before, after, change }) => {
  if (after !== before) await checkConnectedForms(tenant, client, before.id, after, change.connectedForms);
};

export const updateRules: DatasetUpdateRule[] = [identityKept, connectedFormsCollect];

async function lockedDataset(tenant: Tenant, c: Client, id: number): Promise<StoredDataset> {
  const { rows } = await c.query<StoredDataset>(
    `SELECT d.id, d.name, d.description, d.channel, d.identity_field_id AS "identityFieldId", d.columns,
            EXISTS (SELECT 1 FROM dataset_records r WHERE r.dataset_id = d.id) AS "hasRecords"
       FROM datasets d WHERE d.instance_id = $1 AND d.id = $2 FOR UPDATE`,
    [tenant.instanceId, id],
  );
  if (!rows[0]) throw new NotFoundError('dataset', id);
  return rows[0];
}

/** Update a dataset (panel-only); prints as GET /v1/datasets/{id}. */
export async function updateDataset(tenant: Tenant, pool: Pool, id: number, change: DatasetChange): Promise<DatasetDetail> {
  const name = change.name?.trim();
  checkTexts(name, change.description);
  return naming(name, () =>
    withTenant(pool, tenant, async (c) => {
      const before = await lockedDataset(tenant, c, id);
      let after: Declaration = before;
      if (change.channel !== undefined || change.identityField !== undefined || change.columns !== undefined) {
        const keys = await fieldsById(tenant, c, [before.identityFieldId, ...before.columns.map((col) => col.field_id)]);
        const keyOf = (fieldId: number) => (keys.get(fieldId) as FieldDefinition).key;
        const channel = change.channel !== undefined ? change.channel : before.channel;
        // The stored identity field stays declared unless the change names another or the
        // channels now decide it.
        const identityField = change.identityField !== undefined ? change.identityField : channel?.length === 1 ? null : keyOf(before.identityFieldId);
        const columns = change.columns ?? before.columns.map((col) => ({ key: keyOf(col.field_id), required: col.required }));
        after = await resolveDeclaration(tenant, c, { channel, identityField, columns }, new Set(before.columns.map((col) => col.field_id)));
      }
      for (const rule of updateRules) await rule({ tenant, client: c, before, after, change });
      await c.query(
        `UPDATE datasets SET name = $3, description = $4, channel = $5, identity_field_id = $6, columns = $7, updated_at = now()
          WHERE instance_id = $1 AND id = $2`,
        [tenant.instanceId, id, name ?? before.name, change.description !== undefined ? change.description || null : before.description,
          after.channel, after.identityFieldId, JSON.stringify(after.columns)],
      );
      return readDetail(tenant, c, id);
    }),
  );
}

/**
 * Deactivate or reactivate (panel-only). An inactive dataset is no longer offered when
 * connecting a form but still receives contacts by API and from forms already connected (spec).
 */
export async function setDatasetActive(tenant: Tenant, pool: Pool, id: number, active: boolean): Promise<DatasetDetail> {
  return withTenant(pool, tenant, async (c) => {
    const { rowCount } = await c.query(
      'UPDATE datasets SET is_active = $3, updated_at = now() WHERE instance_id = $1 AND id = $2',
      [tenant.instanceId, id, active],
    );
    if (!rowCount) throw new NotFoundError('dataset', id);
    return readDetail(tenant, c, id);
  });
}

/** A declared column as contacts and imports validate it. */
export interface DatasetColumn {
  field: FieldDefinition;
  required: boolean;
}

/** What adding contacts needs of a dataset: its identity field and its columns by key. */
export interface ContactTarget {
  id: number;
  identity: FieldDefinition;
  columns: Map<string, DatasetColumn>;
  /** The keys of the required columns, in declared order. */
  required: string[];
}

/**
 * The dataset contacts are added to, with the catalog fields of its columns (deleted and
 * deactivated fields included: a declaration keeps validating as declared), in one statement:
 * it is read on every contact call. Active or not (spec: an inactive dataset still receives
 * contacts). FOR KEY SHARE (unless a read asks for no lock): a declaration change (FOR UPDATE in
 * updateDataset) waits for the contacts written under the old declaration to commit, and they for it.
 */
export async function contactTarget(tenant: Tenant, c: Client, id: number, opts: { lock?: boolean } = {}): Promise<ContactTarget> {
  const lock = opts.lock ?? true;
  const { rows } = await c.query<{ identity_field_id: number; columns: Declaration['columns']; fields: FieldDefinition[] }>({
    name: lock ? 'dataset-contact-target-locked' : 'dataset-contact-target',
    text: `SELECT d.identity_field_id, d.columns,
                  (SELECT json_agg(json_build_object('id', f.id, 'key', f.field_key, 'type', f.type, 'options', f.options,
                            'maxLength', f.max_length, 'pattern', f.pattern, 'min', f.min, 'max', f.max, 'isActive', f.is_active))
                     FROM fields f
                    WHERE f.instance_id = d.instance_id
                      AND (f.id = d.identity_field_id OR f.id IN (SELECT (col->>'field_id')::bigint FROM jsonb_array_elements(d.columns) AS col))) AS fields
             FROM datasets d WHERE d.instance_id = $1 AND d.id = $2 ${lock ? 'FOR KEY SHARE OF d' : ''}`,
    values: [tenant.instanceId, id],
  });
  const row = rows[0];
  if (!row) throw new NotFoundError('dataset', id);
  const fields = new Map(row.fields.map((f) => [f.id, f]));
  const columns = new Map<string, DatasetColumn>();
  for (const col of row.columns) {
    const field = fields.get(col.field_id)!;
    columns.set(field.key, { field, required: col.required });
  }
  const required = [...columns.entries()].filter(([, col]) => col.required).map(([key]) => key);
  return { id, identity: fields.get(row.identity_field_id)!, columns, required };
}
