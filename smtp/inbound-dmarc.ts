import { simpleParser, type ParsedMail } from 'mailparser';
import type { Logger } from 'pino';
import { reportAddressDomain, reportDomains, coversPolicyDomain, type ReportDomain } from '../domain/dmarc/report-address.js';
import { dkimResolver, reporterAuthenticated, type TxtResolver } from '../domain/dmarc/reporter-dkim.js';
import { storeReport } from '../domain/dmarc/store.js';
import { DMARC_LIMITS, type DmarcLimits } from '../engines/dmarc/limits.js';
import { readReportMail } from '../engines/dmarc/mail.js';
import type { AggregateReport } from '../engines/dmarc/report.js';
import { withTransaction, type Pool } from '../sql/pool.js';

/**
 * The inbound listener's DMARC side (issue 39, docs/dmarc.md): a message to
 * `dmarc@<RETURN_PATH_SUBDOMAIN>.<domain>` (the `rua=` the suggested DMARC record names) is read
 * as aggregate reports (engines/dmarc/) and each report is stored under that domain
 * (domain/dmarc/store.ts), in the instance the domain belongs to.
 *
 * Replies:
 *  - 250 once every report of the message is stored (committed), or was already;
 *  - 250 too for a message that holds no readable report (garbage, a hostile or broken file,
 *    refused by the engine's limits): one log line per refusal, and never a 5xx, which would only
 *    make the reporter retry or bounce it to a human;
 *  - 550 5.7.1 when a report is about a domain that is neither the address's domain nor one of
 *    its subdomains: nobody files a report under someone else's domain. Nothing of that message
 *    is stored;
 *  - 550 5.1.1 when the address names no domain of any instance;
 *  - 451 when Postgres fails (the caller's rule): the reporter retries.
 */
export interface DmarcOptions {
  /** RETURN_PATH_SUBDOMAIN: the report address is dmarc@<this>.<domain>. Default `bounces`. */
  returnPathSubdomain?: string;
  /** DNS_SERVERS, for the DKIM keys of report mails (reporter_authenticated). */
  dnsServers?: readonly string[];
  /** Replaces the DNS lookups (tests). */
  resolver?: TxtResolver;
  /** Called after a commit that stored a new report (wakes the DMARC shipper). */
  onStored?: () => void;
  limits?: DmarcLimits;
}

interface Handled {
  code: number;
  text: string;
}

const IGNORED: Handled = { code: 250, text: '2.0.0 Ok: no report read' };

/** undefined: the message is not to a DMARC report address (the listener's other rules apply). */
export async function readDmarcMail(pool: Pool, raw: Buffer, recipients: string[], client: string, log: Logger, opts: DmarcOptions = {}): Promise<Handled | undefined> {
  const subdomain = opts.returnPathSubdomain ?? 'bounces';
  const names = [...new Set(recipients.map((r) => reportAddressDomain(r, subdomain)).filter((n): n is string => !!n))];
  if (!names.length) return undefined;
  const targets = (await Promise.all(names.map((n) => reportDomains(pool, n)))).flat();
  if (!targets.length) {
    if (names.length < recipients.length) return undefined;
    log.warn({ recipients, client }, 'DMARC report to a domain no instance has: refused');
    return { code: 550, text: '5.1.1 No such mailbox: no domain here has this report address' };
  }

  let reports: Array<{ file: string; report: AggregateReport }>;
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextLinks: true, skipImageLinks: true });
    const readings = await readReportMail(parsed, opts.limits ?? DMARC_LIMITS);
    for (const r of readings) {
      if ('refused' in r) log.warn({ recipients, client, file: r.file, reason: r.refused.reason, why: r.refused.message }, 'DMARC report refused');
    }
    reports = readings.filter((r): r is { file: string; report: AggregateReport } => 'report' in r);
  } catch (err) {
    log.warn({ err, recipients, client }, 'DMARC report mail unreadable: ignored');
    return IGNORED;
  }
  if (!reports.length) {
    log.warn({ recipients, client }, 'DMARC report mail without a readable report: ignored');
    return IGNORED;
  }

  // Each report goes under the domains it is about; a report about none of them refuses the mail.
  const placed: Array<{ report: AggregateReport; file: string; domains: ReportDomain[] }> = [];
  for (const { report, file } of reports) {
    const domains = targets.filter((d) => coversPolicyDomain(d.name, report.policy.domain));
    if (!domains.length) {
      log.warn({ recipients, client, file, policyDomain: report.policy.domain, orgName: report.orgName, reportId: report.reportId }, 'DMARC report about another domain: refused');
      return { code: 550, text: `5.7.1 This address takes reports about ${names.join(', ')} only` };
    }
    placed.push({ report, file, domains });
  }

  const fromDomain = parsed.from?.value[0]?.address?.split('@').pop()?.toLowerCase();
  const authenticated = await reporterAuthenticated(raw, fromDomain, opts.resolver ?? dkimResolver(opts.dnsServers));
  const stored = await withTransaction(pool, async (c) => {
    const out: Array<{ id: string | null; report: AggregateReport; file: string; domain: ReportDomain }> = [];
    for (const { report, file, domains } of placed) {
      for (const domain of domains) out.push({ id: await storeReport({ instanceId: domain.instanceId }, c, domain.domainId, report, authenticated), report, file, domain });
    }
    return out;
  });
  for (const s of stored) {
    log.info(
      { instanceId: s.domain.instanceId, domain: s.domain.name, file: s.file, orgName: s.report.orgName, reportId: s.report.reportId, records: s.report.records.length, reporterAuthenticated: authenticated, duplicate: s.id === null },
      s.id === null ? 'DMARC report already stored' : 'DMARC report stored',
    );
  }
  const fresh = stored.filter((s) => s.id !== null).length;
  if (fresh) opts.onStored?.();
  return { code: 250, text: fresh ? `2.0.0 Ok: ${fresh} DMARC report(s) stored` : '2.0.0 Ok: DMARC report already stored' };
}
