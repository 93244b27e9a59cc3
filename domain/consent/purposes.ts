import type { Client, Pool } from '../../sql/pool.js';
import { isoUtc } from '../../sql/iso-time.js';
import { AppError } from '../errors.js';
import { orNameTaken } from '../unique-names.js';
import type { Page, PageRequest } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';

/**
 * Consent purposes: what a consent is for. Created in the panel (the CLI) and never edited or
 * deleted, since terms and the rules of past events name them by id (sql/migrations/013).
 */
export interface ConsentPurpose {
  id: number;
  name: string;
  created_at: string;
}

const COLUMNS = `id, name, ${isoUtc('created_at')} AS created_at`;

export async function listPurposes(tenant: Tenant, pool: Pool, page: PageRequest): Promise<Page<ConsentPurpose>> {
  const { limit, offset } = window(page);
  return withTenant(pool, tenant, async (c) => {
    const rows = await c.query<ConsentPurpose & { total_count: number }>(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total_count FROM consent_purposes WHERE instance_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
      [tenant.instanceId, limit, offset],
    );
    return toCountedPage(rows.rows, page, countWith(c, 'SELECT count(*)::int AS n FROM consent_purposes WHERE instance_id = $1', [tenant.instanceId]));
  });
}

/** Create a purpose (panel-only). Names are unique in the instance ignoring case and accents. */
export async function createPurpose(tenant: Tenant, pool: Pool, input: { name: string }): Promise<ConsentPurpose> {
  const name = input.name.trim();
  if (!name || name.length > 255) throw new AppError('invalid_name', 'a purpose needs a name of 1 to 255 characters');
  try {
    return await withTenant(pool, tenant, async (c) => {
      const { rows } = await c.query<ConsentPurpose>(
        `INSERT INTO consent_purposes (instance_id, name) VALUES ($1, $2) RETURNING ${COLUMNS}`,
        [tenant.instanceId, name],
      );
      return rows[0]!;
    });
  } catch (err) {
    throw orNameTaken(err, { constraint: 'consent_purposes_name_key', code: 'consent_purpose_name_taken', noun: 'purpose' }, name);
  }
}

/** Which of these ids are not purposes of the instance (in the caller's tenant transaction). */
export async function unknownPurposes(tenant: Tenant, client: Client, ids: readonly number[]): Promise<number[]> {
  if (!ids.length) return [];
  const { rows } = await client.query<{ id: number }>(
    'SELECT id FROM consent_purposes WHERE instance_id = $1 AND id = ANY ($2::bigint[])',
    [tenant.instanceId, [...ids]],
  );
  const known = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !known.has(id));
}
