import type { Pool } from '../../sql/pool.js';

/**
 * Where DMARC aggregate reports come: `dmarc@<return-path host>` of a sending domain, the address
 * the suggested DMARC record names in `rua=` (domain/domains/dns-records.ts). The return-path
 * host (`<RETURN_PATH_SUBDOMAIN>.<domain>`) already has its MX at the inbound listener, and it
 * lies under the domain itself, so RFC 7489 §7.1's authorization record for an external
 * destination is not needed.
 */
export const REPORT_LOCAL_PART = 'dmarc';
// The address itself is written by dmarcReportAddress (domain/domains/dns-records.ts); this reads it back.

/** The sending domain a recipient address names as its report address, or undefined. */
export function reportAddressDomain(address: string, returnPathSubdomain: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(0, at).toLowerCase() !== REPORT_LOCAL_PART) return undefined;
  const host = address.slice(at + 1).trim().toLowerCase().replace(/\.$/, '');
  const prefix = `${returnPathSubdomain.toLowerCase()}.`;
  if (!host.startsWith(prefix) || host.length === prefix.length) return undefined;
  return host.slice(prefix.length);
}

/** A domain a report is filed under. */
export interface ReportDomain {
  domainId: number;
  instanceId: number;
  name: string;
}

/**
 * The domains named `name` a report to their address is filed under. A name is unique within an
 * instance, not across them: when several instances have added it, only those whose DKIM check is
 * approved get the report. The DKIM record is the one check that proves a particular instance:
 * its key and selector are that instance's own, published by whoever controls the domain's DNS,
 * while the MX, SPF and DMARC records are the same for every instance and so approve anyone's
 * copy of the name. One instance alone gets it whatever its checks say (the rua address is only
 * published by whoever controls the domain's DNS). Service role: the listener serves every instance.
 */
export async function reportDomains(pool: Pool, name: string): Promise<ReportDomain[]> {
  const { rows } = await pool.query<{ id: string; instance_id: string; name: string; dkim_status: string }>(
    `SELECT id, instance_id, name, dkim_status FROM domains WHERE name = $1 ORDER BY id`,
    [name],
  );
  const chosen = rows.length > 1 ? rows.filter((r) => r.dkim_status === 'approved') : rows;
  return chosen.map((r) => ({ domainId: Number(r.id), instanceId: Number(r.instance_id), name: r.name }));
}

/** Whether a report about `policyDomain` may be filed under `domain`: the domain itself or one of its subdomains. */
export function coversPolicyDomain(domain: string, policyDomain: string): boolean {
  return policyDomain === domain || policyDomain.endsWith(`.${domain}`);
}
