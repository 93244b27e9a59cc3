import { DependencyUnavailable, NotFoundError } from '../../errors.js';
import type { Pool } from '../../../sql/pool.js';
import type { Tenant } from '../../tenancy/context.js';
import { withTenant } from '../../tenancy/context.js';
import { liveKeys, signingKeyOf } from '../dkim-keys.js';
import { dkimRecordName, dmarcRecordValue, dmarcReportAddress, returnPathHost, type DnsSettings } from '../dns-records.js';
import { normalizeDomainName } from '../domain-name.js';
import type { ComplianceCheck } from './check.js';
import { complaintCheck, type ProviderComplaints } from './complaint-rate.js';
import { dkimCheck } from './dkim.js';
import { dmarcCheck } from './dmarc.js';
import { dmarcRecordName, readDmarcRecord } from './dmarc-record.js';
import { dmarcReportsCheck, reportsSeen } from './dmarc-reports.js';
import { ask, type DnsLookups } from './dns-answers.js';
import { marketingMailsSent, oneClickCheck } from './one-click-unsubscribe.js';
import { spfCheck } from './spf.js';
import { unsubscribeTimeCheck, unsubscribeTimes } from './unsubscribe-time.js';

export interface DomainCompliance {
  domain: string;
  checks: ComplianceCheck[];
}

export interface ComplianceInputs {
  dns: DnsLookups;
  settings: DnsSettings;
  /** PUBLIC_URL: the base of every mail's List-Unsubscribe link. */
  publicUrl: string;
  /**
   * The domain's complaint figures per provider over the last 7 days (the deliverability figures,
   * read from ClickHouse by the caller: domain/ does not reach analytics/). Rejecting means they
   * could not be read (DependencyUnavailable); the rule is then unknown and the report still answers.
   * Without it the report has no complaint_rate check.
   */
  complaints?: (domain: string) => Promise<readonly ProviderComplaints[]>;
  now?: Date;
}

/**
 * A sending domain held against the mailbox providers' published sender rules (issue 40,
 * "Compliance of a domain"; docs/domains.md, Compliance): one check per rule, in a fixed order.
 * The domain is the tenant's by name (404 domain_not_found otherwise, as its status read). Its
 * records are resolved live through DNS_SERVERS; a resolver that does not answer makes the checks
 * that need it unknown rather than the whole report a 503.
 */
export async function domainCompliance(tenant: Tenant, pool: Pool, name: string, inputs: ComplianceInputs): Promise<DomainCompliance> {
  const now = inputs.now ?? new Date();
  const stored = await withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<{ id: number; name: string }>('SELECT id::int, name FROM domains WHERE instance_id = $1 AND name = $2', [
      tenant.instanceId,
      normalizeDomainName(name),
    ]);
    const d = rows[0];
    if (!d) return undefined;
    return {
      domain: d,
      signing: signingKeyOf(await liveKeys(tenant, c, d.id)),
      marketingSent: await marketingMailsSent(tenant, c, d.id, now),
      unsubscribes: await unsubscribeTimes(tenant, c, d.id, now),
    };
  });
  if (!stored) throw new NotFoundError('domain', name);
  const { domain, signing } = stored;

  const [spf, dmarcAnswer, dkimAnswer, seen, complaints] = await Promise.all([
    ask(() => inputs.dns.txt(returnPathHost(domain.name, inputs.settings))),
    ask(() => inputs.dns.txt(dmarcRecordName(domain.name))),
    signing ? ask(() => inputs.dns.txt(dkimRecordName(domain.name, signing.selector))) : Promise.resolve(undefined),
    reportsSeen(tenant, pool, domain.id, now),
    inputs.complaints?.(domain.name).catch((err: unknown) => {
      if (err instanceof DependencyUnavailable) return 'unavailable' as const;
      throw err;
    }),
  ]);
  const dmarc = readDmarcRecord(dmarcAnswer);
  return {
    domain: domain.name,
    checks: [
      spfCheck(domain.name, inputs.settings, spf, dmarc),
      dkimCheck(domain.name, signing, dkimAnswer),
      dmarcCheck(domain.name, dmarc, dmarcRecordValue(domain.name, inputs.settings)),
      dmarcReportsCheck(dmarc, dmarcReportAddress(domain.name, inputs.settings), seen),
      oneClickCheck(stored.marketingSent, inputs.publicUrl, signing !== undefined),
      unsubscribeTimeCheck(stored.unsubscribes),
      ...(complaints === undefined ? [] : [complaintCheck(complaints)]),
    ],
  };
}
