import { isoUtc } from '../../sql/iso-time.js';
import type { Client, Pool } from '../../sql/pool.js';
import { AppError, NotFoundError, RuleViolation } from '../errors.js';
import { orNameTaken } from '../unique-names.js';
import { fieldsByKey } from '../fields/catalog.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { purgeRetiredUploads } from './purge.js';

/**
 * CSV lists (panel-only, through the CLI): a named list whose rows come from uploaded CSV files,
 * each declared column a catalog field read from a position of the file. Unlike a dataset, a
 * list has no identifier: its rows are the files' rows.
 */

/** A list as every list command prints it. */
export interface ListView {
  id: number;
  name: string;
  columns: Array<{ field_key: string; position: number }>;
  max_rows: number;
  /** Rows of its live uploads. */
  rows: number;
  uploads: Array<{ id: number; mode: 'append' | 'overwrite'; file_name: string | null; content_sha256: string; rows: number; rejected: number; created_at: string }>;
  created_at: string;
  updated_at: string;
}

/** A list holds at most this many rows unless its creation says otherwise. */
export const DEFAULT_LIST_MAX_ROWS = 1_000_000;

const VIEW = `l.id, l.name, l.max_rows, ${isoUtc('l.created_at')} AS created_at, ${isoUtc('l.updated_at')} AS updated_at,
  (SELECT coalesce(json_agg(json_build_object('field_key', f.field_key, 'position', (col->>'position')::int) ORDER BY n), '[]')
     FROM jsonb_array_elements(l.columns) WITH ORDINALITY AS x(col, n)
     JOIN fields f ON f.instance_id = l.instance_id AND f.id = (col->>'field_id')::bigint) AS columns,
  (SELECT coalesce(sum(u.rows), 0)::int FROM list_uploads u WHERE u.list_id = l.id AND u.replaced_at IS NULL) AS rows,
  (SELECT coalesce(json_agg(json_build_object('id', u.id, 'mode', u.mode, 'file_name', u.file_name, 'content_sha256', encode(u.content_sha256, 'hex'),
            'rows', u.rows, 'rejected', u.rejected, 'created_at', ${isoUtc('u.created_at')}) ORDER BY u.id), '[]')
     FROM list_uploads u WHERE u.list_id = l.id AND u.replaced_at IS NULL) AS uploads`;

export async function readList(tenant: Tenant, c: Client, id: number): Promise<ListView> {
  const { rows } = await c.query<ListView>(`SELECT ${VIEW} FROM lists l WHERE l.instance_id = $1 AND l.id = $2 AND l.deleted_at IS NULL`, [
    tenant.instanceId,
    id,
  ]);
  if (!rows[0]) throw new NotFoundError('list', id);
  return rows[0];
}

/** The panel's listing of the instance's lists, oldest first, each as `list show` prints it (at most 200: a list is made by hand). */
export async function listLists(tenant: Tenant, pool: Pool): Promise<ListView[]> {
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<ListView>(`SELECT ${VIEW} FROM lists l WHERE l.instance_id = $1 AND l.deleted_at IS NULL ORDER BY l.id LIMIT 200`, [tenant.instanceId]);
    return rows;
  });
}

export async function getList(tenant: Tenant, pool: Pool, id: number): Promise<ListView> {
  return withTenant(pool, tenant, (c) => readList(tenant, c, id));
}

export interface ListInput {
  name: string;
  /** Each column's field_key and its 1-based position in the CSV. */
  columns: Array<{ key: string; position: number }>;
  maxRows?: number;
}

/**
 * Create a list. The declaration is checked in the order a reader finds its problems: a field
 * repeated (list_field_duplicated), a position given twice (list_field_position_duplicated), a
 * field not in the catalog (list_field_not_found) or deactivated (list_field_inactive); then the
 * name (list_name_taken, the unique index's verdict, ignoring case and accents). A list may be
 * created without columns; a file cannot be uploaded to it (list_has_no_fields).
 */
export async function createList(tenant: Tenant, pool: Pool, input: ListInput): Promise<ListView> {
  const name = input.name.trim();
  if (!name || [...name].length > 255) throw new AppError('invalid_name', 'a list needs a name of 1 to 255 characters');
  const maxRows = input.maxRows ?? DEFAULT_LIST_MAX_ROWS;
  if (!Number.isSafeInteger(maxRows) || maxRows < 1 || maxRows > 2_147_483_647) throw new AppError('invalid_max_rows', 'max rows is a positive whole number');
  const keys = new Set<string>();
  const positions = new Set<number>();
  for (const column of input.columns) {
    if (keys.has(column.key)) throw new RuleViolation('list_field_duplicated', `the columns declare ${column.key} more than once`);
    keys.add(column.key);
  }
  for (const column of input.columns) {
    if (!Number.isSafeInteger(column.position) || column.position < 1) throw new AppError('invalid_position', 'a CSV position is a whole number from 1');
    if (positions.has(column.position)) throw new RuleViolation('list_field_position_duplicated', `position ${column.position} is given to two fields`);
    positions.add(column.position);
  }
  try {
    return await withTenant(pool, tenant, async (c) => {
      const fields = await fieldsByKey(tenant, c, [...keys]);
      for (const column of input.columns) {
        const field = fields.get(column.key);
        if (!field) throw new RuleViolation('list_field_not_found', `${column.key} is not a field of the catalog`);
        if (!field.isActive) throw new RuleViolation('list_field_inactive', `${column.key} is a deactivated field`);
      }
      const columns = input.columns.map((column) => ({ field_id: fields.get(column.key)!.id, position: column.position }));
      const { rows } = await c.query<{ id: number }>(
        'INSERT INTO lists (instance_id, name, columns, max_rows) VALUES ($1, $2, $3, $4) RETURNING id',
        [tenant.instanceId, name, JSON.stringify(columns), maxRows],
      );
      return readList(tenant, c, rows[0]!.id);
    });
  } catch (err) {
    throw orNameTaken(err, { constraint: 'lists_name_key', code: 'list_name_taken', noun: 'list' }, name);
  }
}

/**
 * Delete a list: gone, its name free, its uploads retired and their rows deleted (by the
 * service role, after the commit). Prints the list as it was.
 */
export async function deleteList(tenant: Tenant, pool: Pool, id: number): Promise<ListView> {
  const view = await withTenant(pool, tenant, async (c) => {
    const before = await readList(tenant, c, id);
    await c.query('UPDATE lists SET deleted_at = now(), updated_at = now() WHERE instance_id = $1 AND id = $2', [tenant.instanceId, id]);
    await c.query('UPDATE list_uploads SET replaced_at = now() WHERE instance_id = $1 AND list_id = $2 AND replaced_at IS NULL', [tenant.instanceId, id]);
    return before;
  });
  await purgeRetiredUploads(pool, id);
  return view;
}
