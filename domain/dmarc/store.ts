import { reportCounts, type AggregateReport } from '../../engines/dmarc/report.js';
import { append } from '../outbox/append.js';
import type { Client } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';

/**
 * Stores one aggregate report under a domain, and appends its `domain.dmarc_report` event, in the
 * caller's transaction (service role: dmarc_reports is no tenant table, sql/migrations/031). A
 * report is stored once per (instance, domain, reporter org_name, report_id): reporters resend,
 * and some send one report in both RFC 7489 and RFC 9990 form; the second is a no-op, no event.
 * Returns the new row's id, or null when the report was already stored.
 */
export async function storeReport(
  tenant: Pick<Tenant, 'instanceId'>,
  c: Client,
  domainId: number,
  report: AggregateReport,
  reporterAuthenticated: boolean,
): Promise<string | null> {
  const { messages, passed } = reportCounts(report);
  const { rows } = await c.query<{ id: string }>(
    `INSERT INTO dmarc_reports (instance_id, domain_id, org_name, org_email, report_id, begin_at, end_at, schema, policy, generator,
                                message_count, dmarc_pass_count, record_count, reporter_authenticated, records)
     VALUES ($1, $2, $3, $4, $5, to_timestamp($6), to_timestamp($7), $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (instance_id, domain_id, org_name, report_id) DO NOTHING
     RETURNING id`,
    [
      tenant.instanceId,
      domainId,
      report.orgName,
      report.orgEmail,
      report.reportId,
      report.begin,
      report.end,
      report.schema,
      JSON.stringify(report.policy),
      report.generator,
      messages,
      passed,
      report.records.length,
      reporterAuthenticated,
      JSON.stringify(report.records),
    ],
  );
  const id = rows[0]?.id;
  if (id === undefined) return null;
  await append(tenant, c, { kind: 'domain.dmarc_report', entityId: id });
  return id;
}
