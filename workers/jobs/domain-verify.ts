import { dnsSettings } from '../../domain/domains/dns-records.js';
import { resolverLookups, verifyAllDomains } from '../../domain/domains/dns-verify.js';
import { loadTenants } from '../../domain/tenancy/instances.js';
import { defineSchedule } from '../machinery/job.js';

/**
 * Every hour: every sending domain's records are resolved again through DNS_SERVERS
 * (domain/domains/dns-verify.ts), so a domain whose records disappear stops being verified (its
 * senders' mail is then refused with 409 domain_sender_not_verified) and one whose records were
 * published becomes verified without anyone running `cartero domain verify`. Domains whose
 * checks the operator set by hand (`domain set-checks`) are left alone. A resolver that does not
 * answer ends the run with a warning and changes nothing; the next tick tries again.
 */
export const domainVerifyJob = defineSchedule({
  name: 'domains.verify-dns',
  schedule: '23 * * * *',
  async handle({ pool, config, logger }) {
    const result = await verifyAllDomains(pool, resolverLookups(config.domains.dnsServers), dnsSettings(config), (ids) => loadTenants(pool, ids));
    for (const d of result.changed) logger.warn({ domain: d.domain, isVerified: d.is_verified, checks: d }, 'sending domain verification changed');
    if (result.unavailable) logger.warn({ checked: result.checked }, 'DNS verification temporarily unavailable; the rest of the domains wait for the next run');
    else logger.info({ checked: result.checked }, 'sending domains verified against DNS');
  },
});
