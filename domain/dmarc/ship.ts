import type { PublishedPolicy, ReportRecord } from '../../engines/dmarc/report.js';
import type { Client } from '../../sql/pool.js';

/**
 * The DMARC shipper's side of dmarc_reports (sql/migrations/031; workers/jobs/dmarc-ship.ts runs
 * the steps): reports not yet in ClickHouse, claimed in id order, and marked shipped once
 * ClickHouse acknowledged them. Service role: the shipper serves every instance.
 */
export interface UnshippedReport {
  id: string;
  instance_id: string;
  domain: string;
  org_name: string;
  org_email: string | null;
  report_id: string;
  begin_at: Date;
  end_at: Date;
  schema: string;
  policy: PublishedPolicy;
  generator: string | null;
  message_count: string;
  dmarc_pass_count: string;
  record_count: number;
  reporter_authenticated: boolean;
  received_at: Date;
  records: ReportRecord[];
  /** Every DKIM selector the domain has had in Cartero, retired ones too. */
  selectors: string[];
}

/**
 * The oldest unshipped reports, locked for this transaction (other shippers skip them), as many
 * as fit in `maxRecords` records (always at least one: a report is shipped whole).
 */
export async function claimUnshipped(c: Client, maxReports: number, maxRecords: number): Promise<UnshippedReport[]> {
  const { rows: heads } = await c.query<{ id: string; record_count: number }>(
    `SELECT id, record_count FROM dmarc_reports WHERE shipped_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [maxReports],
  );
  const ids: string[] = [];
  let records = 0;
  for (const h of heads) {
    if (ids.length && records + h.record_count > maxRecords) break;
    ids.push(h.id);
    records += h.record_count;
  }
  if (!ids.length) return [];
  const { rows } = await c.query<UnshippedReport>(
    `SELECT r.id, r.instance_id, d.name AS domain, r.org_name, r.org_email, r.report_id, r.begin_at, r.end_at, r.schema, r.policy,
            r.generator, r.message_count, r.dmarc_pass_count, r.record_count, r.reporter_authenticated, r.received_at, r.records,
            coalesce((SELECT array_agg(k.selector ORDER BY k.id) FROM dkim_keys k WHERE k.domain_id = r.domain_id), '{}') AS selectors
       FROM dmarc_reports r JOIN domains d ON d.id = r.domain_id
      WHERE r.id = ANY($1::bigint[]) ORDER BY r.id`,
    [ids],
  );
  return rows;
}

/** Shipped: the records leave Postgres (ClickHouse holds them now). */
export async function markShipped(c: Client, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  await c.query(`UPDATE dmarc_reports SET shipped_at = now(), records = NULL WHERE id = ANY($1::bigint[])`, [ids]);
}
