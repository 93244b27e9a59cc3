import { isoUtc } from '../../sql/iso-time.js';
import type { Client, Pool } from '../../sql/pool.js';
import { AppError, NotFoundError, RuleViolation } from '../errors.js';
import { orNameTaken, violates } from '../unique-names.js';
import type { Page, PageRequest } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { checkPattern } from './pattern.js';
import { FIELD_KEY_PATTERN, RULES_BY_TYPE, type FieldDefinition, type FieldRule, type FieldType } from './types.js';

/** A catalog field as GET /v1/fields shows it (and every CLI field command prints). */
export interface Field {
  id: number;
  field_key: string;
  name: string;
  type: FieldType;
  options: string[] | null;
  rules: { max_length: number | null; pattern: string | null; min: number | null; max: number | null };
  is_system: boolean;
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

const COLUMNS = `id, field_key, name, type, options,
  json_build_object('max_length', max_length, 'pattern', pattern, 'min', min, 'max', max) AS rules,
  is_system, is_active, ${isoUtc('created_at')} AS created_at, ${isoUtc('updated_at')} AS updated_at`;

/** GET /v1/fields: the catalog, oldest first (the system fields lead); deleted fields are gone from it. */
export async function listFields(tenant: Tenant, pool: Pool, page: PageRequest): Promise<Page<Field>> {
  const { limit, offset } = window(page);
  return withTenant(pool, tenant, async (c) => {
    const rows = await c.query<Field & { total_count: number }>({
      name: 'fields-page',
      text: `SELECT ${COLUMNS}, count(*) OVER ()::int AS total_count FROM fields
              WHERE instance_id = $1 AND deleted_at IS NULL ORDER BY id LIMIT $2 OFFSET $3`,
      values: [tenant.instanceId, limit, offset],
    });
    return toCountedPage(rows.rows, page, countWith(c, 'SELECT count(*)::int AS n FROM fields WHERE instance_id = $1 AND deleted_at IS NULL', [tenant.instanceId]));
  });
}

export interface FieldInput {
  key: string;
  name: string;
  type: FieldType;
  maxLength?: number;
  pattern?: string;
  min?: number;
  max?: number;
  options?: string[];
}

/** The rules given, each refused (400, the panel's own codes) where the type does not take it. */
function checkRules(input: FieldInput): void {
  const given: Record<FieldRule, unknown> = { max_length: input.maxLength, pattern: input.pattern, min: input.min, max: input.max };
  for (const [rule, value] of Object.entries(given) as Array<[FieldRule, unknown]>) {
    if (value !== undefined && !RULES_BY_TYPE[input.type].includes(rule)) {
      const takes = RULES_BY_TYPE[input.type];
      throw new AppError('field_rule_not_applicable', `a ${input.type} field takes ${takes.length ? takes.join(', ') : 'no rules'}, not ${rule}`);
    }
  }
  if (input.maxLength !== undefined && !(Number.isSafeInteger(input.maxLength) && input.maxLength > 0)) {
    throw new AppError('field_rule_invalid', 'max_length must be a positive whole number');
  }
  for (const bound of [input.min, input.max]) {
    if (bound !== undefined && !Number.isFinite(bound)) throw new AppError('field_rule_invalid', 'min and max must be numbers');
  }
  if (input.min !== undefined && input.max !== undefined && input.min > input.max) {
    throw new AppError('field_rule_invalid', 'min must not be above max');
  }
  if (input.type === 'select') {
    const options = input.options ?? [];
    if (!options.length) throw new AppError('field_options_required', 'a select field needs its options');
    if (options.some((o) => o.trim() !== o || o === '')) {
      throw new AppError('field_options_invalid', 'options are non-empty texts without surrounding spaces');
    }
    if (new Set(options).size !== options.length) throw new AppError('field_options_invalid', 'an option is repeated');
  } else if (input.options !== undefined) {
    throw new AppError('field_rule_not_applicable', `only a select field takes options, not a ${input.type} field`);
  }
}

/**
 * Create a catalog field (panel-only). The key is refused while any field, deleted ones included,
 * holds it (field_key_already_exists / field_key_reserved); the name while a field not deleted has
 * it ignoring case and accents (field_name_taken). Both are the unique indexes' verdicts
 * (sql/migrations/014), so two creates racing cannot both win.
 */
export async function createField(tenant: Tenant, pool: Pool, input: FieldInput): Promise<Field> {
  if (!FIELD_KEY_PATTERN.test(input.key)) {
    throw new AppError('invalid_field_key', 'a field_key is 1-63 lower-case letters, digits or _, starting with a letter');
  }
  const name = input.name.trim();
  if (!name || [...name].length > 255) throw new AppError('invalid_name', 'a field needs a name of 1 to 255 characters');
  checkRules(input);
  if (input.pattern !== undefined) await checkPattern(input.pattern);
  try {
    return await withTenant(pool, tenant, async (c) => {
      const { rows } = await c.query<Field>(
        `INSERT INTO fields (instance_id, field_key, name, type, options, max_length, pattern, min, max)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
        [tenant.instanceId, input.key, name, input.type, input.options ?? null, input.maxLength ?? null, input.pattern ?? null,
          input.min ?? null, input.max ?? null],
      );
      return rows[0]!;
    });
  } catch (err) {
    if (violates(err, 'fields_key')) {
      const holder = await withTenant(pool, tenant, (c) =>
        c.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM fields WHERE instance_id = $1 AND field_key = $2', [
          tenant.instanceId,
          input.key,
        ]),
      );
      if (holder.rows[0]?.deleted) {
        throw new RuleViolation('field_key_reserved', `field_key ${input.key} belonged to a deleted field and is reserved forever`);
      }
      throw new RuleViolation('field_key_already_exists', `a field with field_key ${input.key} exists`);
    }
    throw orNameTaken(err, { constraint: 'fields_name_key', code: 'field_name_taken', noun: 'field' }, name);
  }
}

/** The field (not deleted) with this key, locked for the change the caller makes. */
async function lockedField(tenant: Tenant, c: Client, key: string): Promise<{ id: number; is_system: boolean }> {
  const { rows } = await c.query<{ id: number; is_system: boolean }>(
    'SELECT id, is_system FROM fields WHERE instance_id = $1 AND field_key = $2 AND deleted_at IS NULL FOR UPDATE',
    [tenant.instanceId, key],
  );
  if (!rows[0]) throw new NotFoundError('field', key);
  return rows[0];
}

/**
 * Deactivate or reactivate a field (panel-only). A deactivated field keeps its data and keeps
 * validating the columns already declared with it, but cannot be declared in a new dataset or
 * list. The system fields identify contacts and cannot be switched off (field_is_system).
 */
export async function setFieldActive(tenant: Tenant, pool: Pool, key: string, active: boolean): Promise<Field> {
  return withTenant(pool, tenant, async (c) => {
    const field = await lockedField(tenant, c, key);
    if (field.is_system && !active) throw new RuleViolation('field_is_system', `${key} is a system field and cannot be deactivated`);
    const { rows } = await c.query<Field>(
      `UPDATE fields SET is_active = $3, updated_at = now() WHERE instance_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [tenant.instanceId, field.id, active],
    );
    return rows[0]!;
  });
}

/** Where a field is declared: each is a reason it cannot be deleted (a check, not a foreign key: columns are jsonb). */
async function declaredBy(tenant: Tenant, c: Client, fieldId: number): Promise<string[]> {
  const { rows } = await c.query<{ what: string }>(
    `SELECT 'dataset ' || to_json(name)::text AS what FROM datasets
      WHERE instance_id = $1 AND (identity_field_id = $2 OR columns @> jsonb_build_array(jsonb_build_object('field_id', $2::bigint)))
     UNION ALL
     SELECT 'list ' || to_json(name)::text FROM lists
      WHERE instance_id = $1 AND deleted_at IS NULL AND columns @> jsonb_build_array(jsonb_build_object('field_id', $2::bigint))`,
    [tenant.instanceId, fieldId],
  );
  return rows.map((r) => r.what);
}

/**
 * Soft-delete a field (panel-only): gone from the catalog, its name free, its key reserved forever.
 * Refused for a system field (field_is_system) and for a field a dataset or list still declares
 * (field_in_use: remove it from them first; their stored values would lose their meaning).
 */
export async function deleteField(tenant: Tenant, pool: Pool, key: string): Promise<Field> {
  return withTenant(pool, tenant, async (c) => {
    const field = await lockedField(tenant, c, key);
    if (field.is_system) throw new RuleViolation('field_is_system', `${key} is a system field and cannot be deleted`);
    const usedBy = await declaredBy(tenant, c, field.id);
    if (usedBy.length) throw new RuleViolation('field_in_use', `field ${key} is declared by ${usedBy.join(', ')}`);
    const { rows } = await c.query<Field>(
      `UPDATE fields SET deleted_at = now(), is_active = false, updated_at = now() WHERE instance_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [tenant.instanceId, field.id],
    );
    return rows[0]!;
  });
}

/** The fields (not deleted) of these keys, for declaring and validating columns. */
export async function fieldsByKey(tenant: Tenant, c: Client, keys: readonly string[]): Promise<Map<string, FieldDefinition>> {
  const { rows } = await c.query<FieldDefinition>(
    `SELECT id, field_key AS key, type, options, max_length AS "maxLength", pattern, min, max, is_active AS "isActive"
       FROM fields WHERE instance_id = $1 AND field_key = ANY ($2::text[]) AND deleted_at IS NULL`,
    [tenant.instanceId, [...keys]],
  );
  return new Map(rows.map((r) => [r.key, r]));
}

/** The fields of these ids (deleted ones too: a declaration made before a delete still reads). */
export async function fieldsById(tenant: Tenant, c: Client, ids: readonly number[]): Promise<Map<number, FieldDefinition>> {
  const { rows } = await c.query<FieldDefinition>(
    `SELECT id, field_key AS key, type, options, max_length AS "maxLength", pattern, min, max, is_active AS "isActive"
       FROM fields WHERE instance_id = $1 AND id = ANY ($2::bigint[])`,
    [tenant.instanceId, [...ids]],
  );
  return new Map(rows.map((r) => [r.id, r]));
}
