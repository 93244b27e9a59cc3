import { NotFoundError } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { liveKeys, signingKeyOf } from './dkim-keys.js';
import { dnsRecords, returnPathHost, type DnsRecord, type DnsSettings } from './dns-records.js';
import { normalizeDomainName } from './domain-name.js';
import type { Domain } from './domains.js';

/**
 * The full domain record with what to publish (`GET /v1/domains/{id}`, `cartero domain show`):
 * the spec's fields, then the return-path host, the selector that signs now, when DNS was last
 * checked, whether the checks were set by hand, and the records with their check states.
 */
export interface DomainWithRecords extends Domain {
  return_path_domain: string;
  dkim_selector: string | null;
  dns_checked_at: Date | null;
  checks_overridden: boolean;
  /** The instance's sandbox (sandbox.ts): the service's domain, its records the operator's. */
  is_sandbox: boolean;
  dns_records: DnsRecord[];
}

export async function getDomainWithRecords(tenant: Tenant, pool: Pool, by: { id: number } | { name: string }, settings: DnsSettings): Promise<DomainWithRecords> {
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<Domain & { dns_checked_at: Date | null; checks_overridden: boolean; is_sandbox: boolean }>(
      `SELECT id, name AS domain, is_verified, mx_status, spf_status, dkim_status, dmarc_status, created_at, updated_at,
              dns_checked_at, checks_overridden, is_sandbox
         FROM domains WHERE instance_id = $1 AND ${'id' in by ? 'id = $2' : 'name = $2'}`,
      [tenant.instanceId, 'id' in by ? by.id : normalizeDomainName(by.name)],
    );
    const domain = rows[0];
    if (!domain) throw new NotFoundError('domain', 'id' in by ? by.id : by.name);
    const keys = await liveKeys(tenant, c, domain.id);
    const signing = signingKeyOf(keys);
    return {
      ...domain,
      return_path_domain: returnPathHost(domain.domain, settings),
      dkim_selector: signing?.selector ?? null,
      dns_records: dnsRecords(domain, keys, signing, settings),
    };
  });
}
