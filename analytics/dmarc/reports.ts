import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { LocalDateFilter } from '../../domain/time/local-date-range.js';
import { readPage, rowCheck } from './page.js';
import { dmarcWhere } from './range.js';

/** One item of GET /v1/domains/{domain_name}/dmarc-reports (api/schemas/dmarc.ts; docs/dmarc.md, Reading the reports). */
export interface DmarcReportItem {
  id: number;
  org_name: string;
  org_email: string | null;
  report_id: string;
  begin_at: string;
  end_at: string;
  schema: 'rfc7489' | 'rfc9990';
  policy: { domain: string; p: string | null; sp: string | null; np: string | null; pct: number | null; adkim: string | null; aspf: string | null };
  message_count: number;
  dmarc_pass_count: number;
  dmarc_fail_count: number;
  reporter_authenticated: boolean;
  received_at: string;
}

/**
 * A domain's reports whose period began in the range, newest period first (ties: the later
 * stored report first), read with FINAL: a report shipped twice is one row. The figures are
 * the report row's, which the DMARC shipper writes from the report's records
 * (engines/dmarc/report.ts reportCounts): message_count the sum of the records' counts,
 * dmarc_pass_count those whose policy_evaluated has DKIM or SPF pass, dmarc_fail_count the rest.
 * begin_at and end_at are whole seconds (DateTime): written out with milliseconds, like every
 * other time of the API (…T10:00:00.000Z).
 */
const SELECT = `
SELECT report_key AS id, org_name, org_email, report_id,
       begin_at, end_at, schema,
       policy_domain, policy_p, policy_sp, policy_np, policy_pct, policy_adkim, policy_aspf,
       message_count, dmarc_pass_count, dmarc_fail_count, reporter_authenticated, received_at
  FROM dmarc_reports FINAL`;

const text = { type: 'string' };
const maybeText = { type: ['string', 'null'] };
const count = { type: 'number' };

const ROW = rowCheck({
  type: 'object',
  additionalProperties: false,
  properties: {
    id: count,
    org_name: text,
    org_email: maybeText,
    report_id: text,
    begin_at: text,
    end_at: text,
    schema: { enum: ['rfc7489', 'rfc9990'] },
    policy_domain: text,
    policy_p: maybeText,
    policy_sp: maybeText,
    policy_np: maybeText,
    policy_pct: { type: ['number', 'null'] },
    policy_adkim: maybeText,
    policy_aspf: maybeText,
    message_count: count,
    dmarc_pass_count: count,
    dmarc_fail_count: count,
    reporter_authenticated: { type: 'boolean' },
    received_at: text,
  },
  required: [
    'id', 'org_name', 'org_email', 'report_id', 'begin_at', 'end_at', 'schema', 'policy_domain', 'policy_p', 'policy_sp', 'policy_np',
    'policy_pct', 'policy_adkim', 'policy_aspf', 'message_count', 'dmarc_pass_count', 'dmarc_fail_count', 'reporter_authenticated', 'received_at',
  ],
});

function shape(r: Record<string, any>): DmarcReportItem {
  return {
    id: r.id,
    org_name: r.org_name,
    org_email: r.org_email,
    report_id: r.report_id,
    begin_at: new Date(r.begin_at).toISOString(),
    end_at: new Date(r.end_at).toISOString(),
    schema: r.schema,
    policy: { domain: r.policy_domain, p: r.policy_p, sp: r.policy_sp, np: r.policy_np, pct: r.policy_pct, adkim: r.policy_adkim, aspf: r.policy_aspf },
    message_count: r.message_count,
    dmarc_pass_count: r.dmarc_pass_count,
    dmarc_fail_count: r.dmarc_fail_count,
    reporter_authenticated: r.reporter_authenticated,
    received_at: r.received_at,
  };
}

/** GET /v1/domains/{domain_name}/dmarc-reports: a page of the domain's reports, total_items their count. */
export function listDmarcReports(
  tenant: Tenant,
  ch: ClickHouseClient,
  domain: string,
  q: LocalDateFilter & PageRequest,
): Promise<Page<DmarcReportItem>> {
  const where = dmarcWhere(tenant, domain, q);
  return readPage(
    ch,
    q,
    {
      query: {
        name: 'dmarc.reports',
        sql: `${SELECT}\n WHERE ${where.sql}\n ORDER BY begin_at DESC, report_key DESC\n LIMIT {page_limit:UInt32} OFFSET {page_offset:UInt64}`,
        params: where.params,
      },
      row: ROW,
      shape,
    },
    { name: 'dmarc.reports.count', sql: `SELECT count() AS n FROM dmarc_reports FINAL WHERE ${where.sql}`, params: where.params },
  );
}
