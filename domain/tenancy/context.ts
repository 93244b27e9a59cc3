import type { Client, Pool } from '../../sql/pool.js';
import { withTransaction } from '../../sql/pool.js';

/** Who a request or job acts for. First parameter of every domain function. */
export interface Tenant {
  instanceId: number;
  slug: string;
  tz: string | null;
}

/**
 * A transaction as the tenant: SET LOCAL ROLE cartero_tenant makes the row-level-security
 * policies apply (the connecting role usually owns the tables and would bypass them), and the
 * instance id the policies compare against is set for this transaction only. Sent as one simple
 * query with BEGIN to save two round trips per request; the id is an integer from our own
 * instances table (checked below), never client text.
 */
export async function withTenant<T>(pool: Pool, tenant: Tenant, fn: (c: Client) => Promise<T>): Promise<T> {
  if (!Number.isSafeInteger(tenant.instanceId)) throw new Error(`bad tenant id ${tenant.instanceId}`);
  return withTransaction(
    pool,
    fn,
    `BEGIN; SET LOCAL ROLE cartero_tenant; SELECT set_config('cartero.instance_id', '${tenant.instanceId}', true)`,
  );
}
