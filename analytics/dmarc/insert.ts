import type { UnshippedReport } from '../../domain/dmarc/ship.js';
import { chDateTime, type ClickHouseClient } from '../client.js';
import { pumpInsert } from '../mail-events.js';

/**
 * Whether a record's DKIM results include a pass by one of the domain's own Cartero selectors:
 * the line between "my mail through Cartero" and "someone else sending as me".
 */
function carteroSigned(report: Pick<UnshippedReport, 'domain' | 'selectors'>, record: UnshippedReport['records'][number]): boolean {
  return record.dkimResults.some(
    (d) => d.result === 'pass' && d.domain?.toLowerCase() === report.domain && d.selector !== null && report.selectors.includes(d.selector.toLowerCase()),
  );
}

const seconds = (d: Date) => chDateTime(d).slice(0, 19);

/**
 * Ships reports and their records (analytics/migrations/008_dmarc_reports.ts): records first,
 * then the reports, so a report listed always has its records (a listing of sources never shows
 * a report's figures without its rows). Acknowledged writes only (pumpInsert).
 */
export async function insertDmarcReports(ch: ClickHouseClient, reports: readonly UnshippedReport[]): Promise<void> {
  const records = reports.flatMap((r) =>
    r.records.map((rec, i) => ({
      instance_id: Number(r.instance_id),
      domain: r.domain,
      begin_at: seconds(r.begin_at),
      report_key: Number(r.id),
      row_number: i,
      end_at: seconds(r.end_at),
      org_name: r.org_name,
      source_ip: rec.sourceIp,
      count: rec.count,
      disposition: rec.disposition ?? '',
      dkim_aligned: rec.dkim ?? '',
      spf_aligned: rec.spf ?? '',
      header_from: rec.headerFrom ?? '',
      envelope_from: rec.envelopeFrom,
      envelope_to: rec.envelopeTo,
      reason_types: rec.reasons.map((x) => x.type ?? ''),
      reason_comments: rec.reasons.map((x) => x.comment ?? ''),
      dkim_domains: rec.dkimResults.map((x) => x.domain ?? ''),
      dkim_selectors: rec.dkimResults.map((x) => x.selector ?? ''),
      dkim_results: rec.dkimResults.map((x) => x.result ?? ''),
      spf_domains: rec.spfResults.map((x) => x.domain ?? ''),
      spf_scopes: rec.spfResults.map((x) => x.scope ?? ''),
      spf_results: rec.spfResults.map((x) => x.result ?? ''),
      cartero_signed: carteroSigned(r, rec),
    })),
  );
  // Inserted in slices: one JSONEachRow body of a 100,000-record report is tens of megabytes.
  for (let i = 0; i < records.length; i += 20_000) await pumpInsert(ch, 'dmarc_records', records.slice(i, i + 20_000), 'dmarc shipper');
  await pumpInsert(
    ch,
    'dmarc_reports',
    reports.map((r) => ({
      instance_id: Number(r.instance_id),
      domain: r.domain,
      begin_at: seconds(r.begin_at),
      report_key: Number(r.id),
      end_at: seconds(r.end_at),
      org_name: r.org_name,
      org_email: r.org_email,
      report_id: r.report_id,
      schema: r.schema,
      policy_domain: r.policy.domain,
      policy_p: r.policy.p,
      policy_sp: r.policy.sp,
      policy_np: r.policy.np,
      policy_pct: r.policy.pct,
      policy_adkim: r.policy.adkim,
      policy_aspf: r.policy.aspf,
      policy_fo: r.policy.fo,
      policy_testing: r.policy.testing,
      policy_discovery: r.policy.discoveryMethod,
      generator: r.generator,
      message_count: Number(r.message_count),
      dmarc_pass_count: Number(r.dmarc_pass_count),
      dmarc_fail_count: Number(r.message_count) - Number(r.dmarc_pass_count),
      record_count: r.record_count,
      reporter_authenticated: r.reporter_authenticated,
      received_at: chDateTime(r.received_at),
    })),
    'dmarc shipper',
  );
}
