import { NotFoundError } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { lift, type RestrictionRow } from './restrictions.js';

/**
 * Lift a restriction named by its id (the panel's DELETE /v1/private/restrictions/{id}), through
 * the same lift as `cartero restriction lift`: the row stays, with deleted_at, as history. One of
 * another instance, already lifted or unknown is restriction_not_found. The row is locked first so
 * a concurrent lift of the address cannot make this one answer a row it did not lift.
 */
export async function liftRestrictionById(tenant: Tenant, pool: Pool, id: number): Promise<RestrictionRow> {
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<{ recipient: string }>(
      'SELECT recipient FROM mail_restrictions WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE',
      [tenant.instanceId, id],
    );
    const lifted = rows[0] ? await lift(tenant, c, rows[0].recipient) : undefined;
    if (!lifted) throw new NotFoundError('restriction', id);
    return lifted;
  });
}
