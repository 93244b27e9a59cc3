import { returnPathHost, spfMechanism, type DnsSettings } from '../dns-records.js';
import { check, SOURCES, type ComplianceCheck } from './check.js';
import { recordsStarting, type Answer } from './dns-answers.js';
import type { DmarcRecord } from './dmarc-record.js';

export const SPF_RULE = { rule: 'spf_aligned', applies_to: ['gmail', 'yahoo', 'microsoft'], source: SOURCES.google } as const;

/**
 * SPF published and aligned. Cartero's mail goes out with MAIL FROM `bounce+<id>@` the
 * return-path host, `<RETURN_PATH_SUBDOMAIN>.<domain>` (dns-records.ts), so SPF is checked on that
 * host's record, which must be the one `v=spf1` record (RFC 7208 3.2) and carry Cartero's
 * mechanism (`mx`, or `include:<SPF_INCLUDE>`). Aligned: the envelope domain is the domain or a
 * subdomain of it (DMARC relaxed alignment, RFC 7489 3.1.2); strict SPF alignment (`aspf=s`) is
 * not met by a subdomain, so DMARC then rests on DKIM alone: warn.
 */
export function spfCheck(domain: string, settings: Pick<DnsSettings, 'returnPathSubdomain' | 'spfInclude'>, spf: Answer, dmarc: DmarcRecord): ComplianceCheck {
  const host = returnPathHost(domain, settings);
  const mechanism = spfMechanism(settings);
  const wanted = `v=spf1 ${mechanism} -all`;
  if (spf.kind === 'unavailable') return check(SPF_RULE, 'unknown', `DNS did not answer for the SPF record of ${host}; try again later.`);
  const records = recordsStarting(spf, /^v=spf1(\s|$)/i);
  if (!records.length) return check(SPF_RULE, 'fail', `No SPF record at ${host}, the envelope (MAIL FROM) domain of the domain's mail: publish TXT "${wanted}".`);
  if (records.length > 1) {
    return check(SPF_RULE, 'fail', `${records.length} SPF records at ${host}: more than one is a permanent error (RFC 7208 3.2); keep one, "${wanted}".`);
  }
  const terms = records[0]!.trim().toLowerCase().split(/\s+/);
  if (!terms.some((t) => t === mechanism.toLowerCase() || t === `+${mechanism.toLowerCase()}`)) {
    return check(SPF_RULE, 'fail', `The SPF record of ${host} does not authorize Cartero's servers (no "${mechanism}"): publish "${wanted}".`);
  }
  const aligned = host === domain || host.endsWith(`.${domain}`);
  if (!aligned) return check(SPF_RULE, 'fail', `The envelope domain ${host} is not ${domain} nor a subdomain of it: SPF cannot align with From.`);
  if (dmarc.kind === 'valid' && dmarc.aspf === 's') {
    return check(
      SPF_RULE,
      'warn',
      `SPF passes for ${host}, but the DMARC record asks strict SPF alignment (aspf=s), which a subdomain envelope does not meet: DMARC passes on DKIM alone. Use aspf=r.`,
    );
  }
  return check(SPF_RULE, 'pass', `SPF record of ${host} authorizes Cartero ("${mechanism}"); that envelope domain is a subdomain of ${domain}, aligned (relaxed).`);
}
