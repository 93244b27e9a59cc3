import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { LocalDateFilter } from '../../domain/time/local-date-range.js';
import { readPage, rowCheck } from './page.js';
import { dmarcWhere } from './range.js';

/** One item of GET /v1/domains/{domain_name}/dmarc-sources (api/schemas/dmarc.ts; docs/dmarc.md, Reading the reports). */
export interface DmarcSourceItem {
  source_ip: string;
  message_count: number;
  dmarc_pass_count: number;
  dkim_aligned_pass_count: number;
  spf_aligned_pass_count: number;
  dispositions: { none: number; quarantine: number; reject: number };
  header_from: string | null;
  reporters: string[];
  cartero_signed_count: number;
}

/**
 * The records of a domain's reports whose period began in the range, summed per source IP, read
 * with FINAL (a report shipped twice counts once). Every figure is a sum of the records' `count`
 * (messages, not records):
 *  - dmarc_pass_count: policy_evaluated's DKIM or SPF is `pass` (what the receiver evaluated,
 *    RFC 7489 §6.6.2; engines/dmarc/report.ts passesDmarc); the aligned counts, each one alone;
 *  - dispositions: policy_evaluated's disposition, the three RFC values (a record whose
 *    disposition is missing or another word counts in none of them);
 *  - cartero_signed_count: records the shipper marked cartero_signed (a DKIM pass by one of the
 *    domain's Cartero selectors);
 *  - header_from: the header_from with the most messages from this IP (ties: the first in text
 *    order; an empty one only when there is no other), null when the reports gave none;
 *  - reporters: the distinct reporting org_names, sorted (empty names left out).
 * Two passes: per (IP, header_from) first, so the busiest header_from of an IP is known, then per
 * IP. Busiest sources first; ties by source_ip as text, so pages never overlap.
 */
const SOURCES = (where: string) => `
SELECT source_ip,
       sum(n) AS message_count,
       sum(passed) AS dmarc_pass_count,
       sum(dkim_passed) AS dkim_aligned_pass_count,
       sum(spf_passed) AS spf_aligned_pass_count,
       sum(d_none) AS disposition_none,
       sum(d_quarantine) AS disposition_quarantine,
       sum(d_reject) AS disposition_reject,
       argMin(header_from, tuple(header_from = '', -toInt64(n), header_from)) AS busiest_header_from,
       arraySort(groupUniqArrayArray(orgs)) AS reporters,
       sum(signed_n) AS cartero_signed_count
  FROM (
    SELECT source_ip, header_from,
           sum(\`count\`) AS n,
           sumIf(\`count\`, dkim_aligned = 'pass' OR spf_aligned = 'pass') AS passed,
           sumIf(\`count\`, dkim_aligned = 'pass') AS dkim_passed,
           sumIf(\`count\`, spf_aligned = 'pass') AS spf_passed,
           sumIf(\`count\`, disposition = 'none') AS d_none,
           sumIf(\`count\`, disposition = 'quarantine') AS d_quarantine,
           sumIf(\`count\`, disposition = 'reject') AS d_reject,
           sumIf(\`count\`, cartero_signed) AS signed_n,
           groupUniqArrayIf(org_name, org_name != '') AS orgs
      FROM dmarc_records FINAL
     WHERE ${where}
     GROUP BY source_ip, header_from
  )
 GROUP BY source_ip
 ORDER BY message_count DESC, source_ip ASC
 LIMIT {page_limit:UInt32} OFFSET {page_offset:UInt64}`;

const count = { type: 'number' };

const ROW = rowCheck({
  type: 'object',
  additionalProperties: false,
  properties: {
    source_ip: { type: 'string' },
    message_count: count,
    dmarc_pass_count: count,
    dkim_aligned_pass_count: count,
    spf_aligned_pass_count: count,
    disposition_none: count,
    disposition_quarantine: count,
    disposition_reject: count,
    busiest_header_from: { type: 'string' },
    reporters: { type: 'array', items: { type: 'string' } },
    cartero_signed_count: count,
  },
  required: [
    'source_ip', 'message_count', 'dmarc_pass_count', 'dkim_aligned_pass_count', 'spf_aligned_pass_count', 'disposition_none',
    'disposition_quarantine', 'disposition_reject', 'busiest_header_from', 'reporters', 'cartero_signed_count',
  ],
});

function shape(r: Record<string, any>): DmarcSourceItem {
  return {
    source_ip: r.source_ip,
    message_count: r.message_count,
    dmarc_pass_count: r.dmarc_pass_count,
    dkim_aligned_pass_count: r.dkim_aligned_pass_count,
    spf_aligned_pass_count: r.spf_aligned_pass_count,
    dispositions: { none: r.disposition_none, quarantine: r.disposition_quarantine, reject: r.disposition_reject },
    header_from: r.busiest_header_from === '' ? null : r.busiest_header_from,
    reporters: r.reporters,
    cartero_signed_count: r.cartero_signed_count,
  };
}

/** GET /v1/domains/{domain_name}/dmarc-sources: a page of the domain's source IPs, total_items their number. */
export function listDmarcSources(
  tenant: Tenant,
  ch: ClickHouseClient,
  domain: string,
  q: LocalDateFilter & PageRequest,
): Promise<Page<DmarcSourceItem>> {
  const where = dmarcWhere(tenant, domain, q);
  return readPage(
    ch,
    q,
    { query: { name: 'dmarc.sources', sql: SOURCES(where.sql), params: where.params }, row: ROW, shape },
    { name: 'dmarc.sources.count', sql: `SELECT uniqExact(source_ip) AS n FROM dmarc_records FINAL WHERE ${where.sql}`, params: where.params },
  );
}
