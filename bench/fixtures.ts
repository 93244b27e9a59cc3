import { addDomain, setDomainChecks } from '../domain/domains/domains.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { createInstance } from '../domain/tenancy/instances.js';
import type { Pool } from '../sql/pool.js';

/** What the benchmarks seed first, in the fresh database of the service they started. */

/** A new instance, as the tenant its domain calls take. */
export async function benchTenant(pool: Pool, slug: string, name: string): Promise<Tenant> {
  const instance = await createInstance(pool, { slug, name });
  return { instanceId: instance.id, slug, tz: instance.tz };
}

/**
 * A domain its senders may send from: added, with its four checks approved as `domain verify`
 * would set them (a benchmark publishes no DNS records; what it measures starts after).
 */
export async function verifiedDomain(tenant: Tenant, pool: Pool, domain: string, opts: Parameters<typeof addDomain>[3] = {}): Promise<void> {
  await addDomain(tenant, pool, domain, opts);
  await setDomainChecks(tenant, pool, domain, { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
}
