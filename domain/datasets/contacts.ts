import { isoUtc } from '../../sql/iso-time.js';
import type { Client, Pool } from '../../sql/pool.js';
import { RuleViolation, ValidationFailed, type FieldError } from '../errors.js';
import type { StoredValue } from '../fields/values.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { checkContact } from './contact.js';
import { contactTarget, type ContactTarget } from './datasets.js';

/** A dataset contact as the API shows it (the spec leaves its fields to us: docs/datasets.md). */
export interface DatasetRecord {
  id: number;
  dataset_id: number;
  /** The identity field's value, in its stored form (emails lower-case, phones E.164). */
  identifier: string;
  /** Every column the contact carries, typed as its field says, by field_key. */
  values: Record<string, StoredValue>;
  created_at: string;
  updated_at: string;
}

export const RECORD_COLUMNS = (alias: string) =>
  `${alias}.id, ${alias}.dataset_id, ${alias}.identifier, ${alias}.values, ${isoUtc(`${alias}.created_at`)} AS created_at, ${isoUtc(`${alias}.updated_at`)} AS updated_at`;

/** Contacts in one call (spec: up to 1,000 in a batch). */
export const CONTACT_BATCH_MAX = 1_000;

/** What one contact came to: as it alone would have been answered. */
export type ContactResult =
  | { index: number; status: 201 | 200; record: DatasetRecord }
  | { index: number; status: 409 | 422; code: string; detail: string; errors?: FieldError[] };

export interface BatchResult {
  results: ContactResult[];
  created: number;
  updated: number;
  rejected: number;
}

/**
 * The upsert of valid contacts, one statement for a whole batch: insert each identifier, or merge
 * its values into the stored record (a column given replaces the stored value, one not given
 * stays). A contact whose values are all stored already is not rewritten (updated_at keeps
 * telling when the record last changed), so a retried call changes nothing. Rows are taken in
 * identifier order, the same in every call, so two batches touching the same contacts cannot
 * deadlock. `created` is Postgres's own answer: a row this statement inserted has no xmax.
 * Unchanged rows come from the second branch (the statement's snapshot).
 */
const UPSERT = `
WITH input AS (SELECT * FROM unnest($3::text[], $4::jsonb[]) AS i(identifier, vals)),
up AS (
  INSERT INTO dataset_records AS r (instance_id, dataset_id, identifier, values)
  SELECT $1, $2, identifier, vals FROM input ORDER BY identifier
  ON CONFLICT (dataset_id, identifier) DO UPDATE SET values = r.values || excluded.values, updated_at = now()
   WHERE NOT r.values @> excluded.values
  RETURNING ${RECORD_COLUMNS('r')}, r.xmax = 0 AS created
)
SELECT * FROM up
UNION ALL
SELECT ${RECORD_COLUMNS('r')}, false AS created
  FROM dataset_records r JOIN input i ON r.dataset_id = $2 AND r.identifier = i.identifier
 WHERE NOT EXISTS (SELECT 1 FROM up WHERE up.identifier = i.identifier)`;

type Row = DatasetRecord & { created: boolean };

async function upsert(tenant: Tenant, c: Client, datasetId: number, contacts: Map<string, Record<string, StoredValue>>): Promise<Map<string, Row>> {
  const identifiers = [...contacts.keys()];
  const { rows } = await c.query<Row>({
    name: 'dataset-contacts-upsert',
    text: UPSERT,
    values: [tenant.instanceId, datasetId, identifiers, identifiers.map((id) => JSON.stringify(contacts.get(id)))],
  });
  const found = new Map(rows.map((r) => [r.identifier, r]));
  // A contact another transaction inserted after this statement's snapshot, with these very
  // values, is neither returned by the upsert nor seen by the second branch: read it now.
  const late = identifiers.filter((id) => !found.has(id));
  if (late.length) {
    const again = await c.query<DatasetRecord>(
      `SELECT ${RECORD_COLUMNS('r')} FROM dataset_records r WHERE r.dataset_id = $1 AND r.identifier = ANY ($2::text[])`,
      [datasetId, late],
    );
    for (const r of again.rows) found.set(r.identifier, { ...r, created: false });
  }
  return found;
}

function withoutCreated(row: Row): DatasetRecord {
  const { created: _, ...record } = row;
  return record;
}

/** How a caller's values meet the dataset: `declaredOnly` leaves out the keys it does not declare instead of refusing them (a form's answers feed only its dataset's columns). */
export interface ContactInputOptions {
  declaredOnly?: boolean;
}

/** One contact checked, its refusal thrown as the API answers it (409 with its code, 422 with errors). */
function checkedOrThrown(target: ContactTarget, values: unknown, opts: ContactInputOptions = {}) {
  const plain = values !== null && typeof values === 'object' && !Array.isArray(values);
  const kept = opts.declaredOnly && plain ? Object.fromEntries(Object.entries(values).filter(([key]) => target.columns.has(key))) : values;
  const checked = checkContact(target, kept);
  if (checked.ok) return checked;
  const r = checked.refusal;
  if (r.status === 422) throw new ValidationFailed(r.errors);
  throw new RuleViolation(r.code, r.message);
}

/**
 * POST /v1/datasets/{id}/contacts with one contact: the stored record and whether it is new
 * (201) or was there (200); a refusal is thrown as the API answers it (409 with its code, 422
 * with errors at /values/<field_key>).
 */
export async function addContact(
  tenant: Tenant,
  pool: Pool,
  datasetId: number,
  values: unknown,
  opts: ContactInputOptions = {},
): Promise<{ status: 201 | 200; record: DatasetRecord }> {
  return withTenant(pool, tenant, async (c) => {
    const target = await contactTarget(tenant, c, datasetId);
    const checked = checkedOrThrown(target, values, opts);
    const row = (await upsert(tenant, c, datasetId, new Map([[checked.identifier, checked.values]]))).get(checked.identifier)!;
    return { status: row.created ? 201 : 200, record: withoutCreated(row) };
  });
}

/**
 * Update an existing contact only (a form of type update: spec, "updates an existing contact"):
 * the contact checked as POST /v1/datasets/{id}/contacts checks one, then its values merged into
 * the record of its identifier, if there is one. 'not_found' when there is none (nothing is
 * created); a refusal is thrown as addContact throws it.
 */
export async function updateExistingContact(
  tenant: Tenant,
  pool: Pool,
  datasetId: number,
  values: Record<string, unknown>,
  opts: ContactInputOptions = {},
): Promise<'updated' | 'unchanged' | 'not_found'> {
  return withTenant(pool, tenant, async (c) => {
    const target = await contactTarget(tenant, c, datasetId);
    const checked = checkedOrThrown(target, values, opts);
    const { rows } = await c.query<{ changed: boolean }>(
      `WITH up AS (
         UPDATE dataset_records SET values = values || $3::jsonb, updated_at = now()
          WHERE dataset_id = $1 AND identifier = $2 AND NOT values @> $3::jsonb RETURNING true AS changed
       )
       SELECT changed FROM up UNION ALL SELECT false FROM dataset_records WHERE dataset_id = $1 AND identifier = $2 AND NOT EXISTS (SELECT 1 FROM up)`,
      [datasetId, checked.identifier, JSON.stringify(checked.values)],
    );
    if (!rows[0]) return 'not_found';
    return rows[0].changed ? 'updated' : 'unchanged';
  });
}

/**
 * POST /v1/datasets/{id}/contacts with a batch: each contact checked on its own (a bad one never
 * blocks the others), the valid ones upserted in one statement. Contacts repeating an
 * identifier are merged in order, as if sent one after the other: the first is answered 201 or
 * 200 as the database says, the later ones 200 (each alone would have updated it), and all show
 * the record as the batch left it.
 */
export async function addContacts(tenant: Tenant, pool: Pool, datasetId: number, contacts: unknown[]): Promise<BatchResult> {
  return withTenant(pool, tenant, async (c) => {
    const target = await contactTarget(tenant, c, datasetId);
    const results: ContactResult[] = new Array(contacts.length);
    const merged = new Map<string, Record<string, StoredValue>>();
    const firstOf = new Map<string, number>();
    const accepted: Array<{ index: number; identifier: string }> = [];
    contacts.forEach((contact, index) => {
      const values = contact !== null && typeof contact === 'object' && !Array.isArray(contact) ? (contact as { values?: unknown }).values : contact;
      const checked = checkContact(target, values, `/contacts/${index}`);
      if (!checked.ok) {
        const r = checked.refusal;
        results[index] = r.status === 422
          ? { index, status: 422, code: r.code, detail: r.message, errors: r.errors }
          : { index, status: 409, code: r.code, detail: r.message };
        return;
      }
      merged.set(checked.identifier, { ...merged.get(checked.identifier), ...checked.values });
      if (!firstOf.has(checked.identifier)) firstOf.set(checked.identifier, index);
      accepted.push({ index, identifier: checked.identifier });
    });
    const rows = merged.size ? await upsert(tenant, c, datasetId, merged) : new Map<string, Row>();
    for (const { index, identifier } of accepted) {
      const row = rows.get(identifier)!;
      results[index] = { index, status: row.created && firstOf.get(identifier) === index ? 201 : 200, record: withoutCreated(row) };
    }
    return {
      results,
      created: results.filter((r) => r.status === 201).length,
      updated: results.filter((r) => r.status === 200).length,
      rejected: results.filter((r) => r.status >= 400).length,
    };
  });
}
