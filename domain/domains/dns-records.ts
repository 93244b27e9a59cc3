import type { DkimKey } from './dkim-keys.js';
import type { DnsCheckState } from './check-states.js';
import { REPORT_LOCAL_PART } from '../dmarc/report-address.js';

/**
 * The DNS records a sending domain publishes, and what a check of each expects. Pure: the
 * verifier (dns-verify.ts), `GET /v1/domains/{id}` and the CLI read the same list.
 *
 *  - DKIM: TXT `<selector>._domainkey.<domain>` = `v=DKIM1; k=rsa; p=<public key>`, one per live key.
 *  - MX: the return-path host `<RETURN_PATH_SUBDOMAIN>.<domain>` (bounces.<domain>), where mail
 *    goes out with MAIL FROM `bounce+<id>@` it, names RETURN_PATH_MX_HOST (the inbound listener):
 *    DSNs reach Cartero, and receivers that check the envelope domain can deliver to it.
 *  - SPF: TXT on the same host, `v=spf1 mx -all` (or `include:<SPF_INCLUDE>`): the envelope domain
 *    is a subdomain of the From domain, so SPF passes aligned (relaxed) for DMARC.
 *  - DMARC: TXT `_dmarc.<domain>`, suggested `v=DMARC1; p=none; adkim=r; aspf=r;
 *    rua=mailto:dmarc@<return-path host>`: any valid DMARC record (v=DMARC1 with a p= tag) approves
 *    the check, with or without `rua`; the policy is the owner's choice. The aggregate reports go
 *    to the return-path host because it already has its MX on the inbound listener, which reads
 *    them (issue 39), and shares the organizational domain, so RFC 7489 7.1's authorization
 *    record for an external destination is not needed.
 */
export interface DnsSettings {
  returnPathSubdomain: string;
  mxHost: string;
  spfInclude: string | undefined;
}

export type DnsCheck = 'mx' | 'spf' | 'dkim' | 'dmarc';

export interface DnsRecord {
  /** Which of the domain's four checks this record serves. */
  check: DnsCheck;
  type: 'TXT' | 'MX';
  /** Fully qualified, without a trailing dot. */
  name: string;
  /** What to publish (for MX: `<priority> <host>`). */
  value: string;
  /** This record's own check state (a DKIM record: its key's; the others: the domain's). */
  status: DnsCheckState;
  /** DKIM records: the selector, and whether mail is signed with this key now. */
  selector?: string;
  signing?: boolean;
}

export function returnPathHost(domain: string, settings: Pick<DnsSettings, 'returnPathSubdomain'>): string {
  return `${settings.returnPathSubdomain}.${domain}`;
}

export function dkimRecordName(domain: string, selector: string): string {
  return `${selector}._domainkey.${domain}`;
}

export function dkimRecordValue(publicKey: string): string {
  return `v=DKIM1; k=rsa; p=${publicKey}`;
}

/** Where the suggested DMARC record sends aggregate reports: the listener reads this mailbox. */
export function dmarcReportAddress(domain: string, settings: Pick<DnsSettings, 'returnPathSubdomain'>): string {
  return `${REPORT_LOCAL_PART}@${returnPathHost(domain, settings)}`;
}

export function dmarcRecordValue(domain: string, settings: Pick<DnsSettings, 'returnPathSubdomain'>): string {
  return `v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:${dmarcReportAddress(domain, settings)}`;
}

/** The SPF mechanism the return-path host's record must carry. */
export function spfMechanism(settings: Pick<DnsSettings, 'spfInclude'>): string {
  return settings.spfInclude ? `include:${settings.spfInclude}` : 'mx';
}

export function dnsRecords(
  domain: { domain: string; mx_status: DnsCheckState; spf_status: DnsCheckState; dmarc_status: DnsCheckState },
  keys: readonly DkimKey[],
  signing: DkimKey | undefined,
  settings: DnsSettings,
): DnsRecord[] {
  const host = returnPathHost(domain.domain, settings);
  return [
    ...keys.map((k): DnsRecord => ({
      check: 'dkim',
      type: 'TXT',
      name: dkimRecordName(domain.domain, k.selector),
      value: dkimRecordValue(k.public_key),
      status: k.status,
      selector: k.selector,
      signing: k.id === signing?.id,
    })),
    { check: 'mx', type: 'MX', name: host, value: `10 ${settings.mxHost}`, status: domain.mx_status },
    { check: 'spf', type: 'TXT', name: host, value: `v=spf1 ${spfMechanism(settings)} -all`, status: domain.spf_status },
    { check: 'dmarc', type: 'TXT', name: `_dmarc.${domain.domain}`, value: dmarcRecordValue(domain.domain, settings), status: domain.dmarc_status },
  ];
}

/** The DNS settings of the configuration (RETURN_PATH_MX_HOST defaults to PUBLIC_URL's host). */
export function dnsSettings(config: { publicUrl: string; domains: { returnPathSubdomain: string; mxHost: string | undefined; spfInclude: string | undefined } }): DnsSettings {
  return {
    returnPathSubdomain: config.domains.returnPathSubdomain,
    mxHost: config.domains.mxHost ?? new URL(config.publicUrl).hostname,
    spfInclude: config.domains.spfInclude,
  };
}
