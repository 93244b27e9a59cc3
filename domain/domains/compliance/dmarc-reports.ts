import { query, type Pool } from '../../../sql/pool.js';
import type { Tenant } from '../../tenancy/context.js';
import { check, SOURCES, type ComplianceCheck } from './check.js';
import { ruaAddresses, type DmarcRecord } from './dmarc-record.js';

export const DMARC_REPORTS_RULE = { rule: 'dmarc_reports_received', applies_to: ['gmail', 'yahoo', 'microsoft'], source: SOURCES.google } as const;

/** Reporters send one aggregate report a day per domain they received mail from: a week without one means they stopped. */
export const REPORT_WINDOW_DAYS = 7;

export interface ReportsSeen {
  /** Reports received in the last REPORT_WINDOW_DAYS. */
  recent: number;
  /** When the latest report was received, ever; null: none yet. */
  latest: Date | null;
}

/**
 * What the inbound listener stored for a domain (dmarc_reports, sql/migrations/031). That table
 * is the service role's only (the listener, the shipper and the fan-out serve every instance),
 * so this read names the instance in its WHERE, as they do.
 */
export async function reportsSeen(tenant: Pick<Tenant, 'instanceId'>, pool: Pool, domainId: number, now: Date): Promise<ReportsSeen> {
  const { rows } = await query<{ recent: number; latest: Date | null }>(
    pool,
    `SELECT count(*) FILTER (WHERE received_at > $3::timestamptz - make_interval(days => $4))::int AS recent, max(received_at) AS latest
       FROM dmarc_reports WHERE instance_id = $1 AND domain_id = $2`,
    [tenant.instanceId, domainId, now, REPORT_WINDOW_DAYS],
    'cartero_compliance_dmarc_reports',
  );
  return { recent: rows[0]?.recent ?? 0, latest: rows[0]?.latest ?? null };
}

/**
 * The domain's DMARC aggregate reports reach Cartero (docs/dmarc.md). Not a provider requirement
 * in itself (they ask for a DMARC record), but the only way to see how they judge the domain's
 * mail, and who else sends as it:
 *   no valid DMARC record, or one without rua=      → fail (no one gets the reports)
 *   rua names other addresses but not Cartero's     → warn (the owner reads them elsewhere)
 *   rua names Cartero's; a report in the last 7 days → pass
 *   rua names Cartero's; reports before, none in 7 days → warn (they stopped)
 *   rua names Cartero's; none yet, or DNS silent     → unknown
 */
export function dmarcReportsCheck(record: DmarcRecord, reportAddress: string, seen: ReportsSeen): ComplianceCheck {
  const arrived = `${seen.recent} report${seen.recent === 1 ? '' : 's'} arrived in the last ${REPORT_WINDOW_DAYS} days`;
  if (record.kind === 'unavailable') {
    if (seen.recent > 0) return check(DMARC_REPORTS_RULE, 'pass', `${arrived} (DNS did not answer for the DMARC record just now).`);
    return check(DMARC_REPORTS_RULE, 'unknown', 'DNS did not answer for the DMARC record, and no report arrived lately; try again later.');
  }
  if (record.kind !== 'valid') {
    return check(DMARC_REPORTS_RULE, 'fail', `No valid DMARC record, so no reporter sends aggregate reports: publish one with rua=mailto:${reportAddress}.`);
  }
  const named = ruaAddresses(record.rua);
  if (!record.rua.length) {
    return check(DMARC_REPORTS_RULE, 'fail', `The DMARC record has no rua=: no one receives aggregate reports. Add rua=mailto:${reportAddress}.`);
  }
  if (!named.includes(reportAddress.toLowerCase())) {
    return check(
      DMARC_REPORTS_RULE,
      'warn',
      `Aggregate reports go to ${record.rua.join(', ')}, not to Cartero: add mailto:${reportAddress} to rua= (beside the others) to read them here.`,
    );
  }
  if (seen.recent > 0) return check(DMARC_REPORTS_RULE, 'pass', `rua= names ${reportAddress}; ${arrived}.`);
  if (seen.latest) {
    return check(
      DMARC_REPORTS_RULE,
      'warn',
      `rua= names ${reportAddress}, but no report arrived in the last ${REPORT_WINDOW_DAYS} days (the latest on ${seen.latest.toISOString()}): check the MX of its host.`,
    );
  }
  return check(
    DMARC_REPORTS_RULE,
    'unknown',
    `rua= names ${reportAddress}; no report has arrived yet (reporters send one a day for a domain they received mail from).`,
  );
}
