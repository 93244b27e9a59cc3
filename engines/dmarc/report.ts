/**
 * A DMARC aggregate report as Cartero keeps it, whichever layout it came in: RFC 7489 appendix C
 * (with or without the `http://dmarc.org/dmarc-xml/0.1` namespace, and the pre-RFC drafts,
 * which wrote `identities` for `identifiers`) or RFC 9990 (`urn:ietf:params:xml:ns:dmarc-2.0`:
 * `np`, `testing`, `discovery_method`, `generator`, no `pct`). Keyword values (`pass`,
 * `quarantine`, `r`...) are lower-cased: reporters write `Pass` too. An element the report left
 * out is null (a list, empty).
 */
export interface AggregateReport {
  /** `rfc9990` when the report declares RFC 9990's namespace, else `rfc7489`. */
  schema: 'rfc7489' | 'rfc9990';
  /** The reporter's organization; some reporters leave it empty. */
  orgName: string;
  orgEmail: string | null;
  extraContactInfo: string | null;
  reportId: string;
  /** The reported period, Unix seconds (UTC). */
  begin: number;
  end: number;
  generator: string | null;
  errors: string[];
  policy: PublishedPolicy;
  records: ReportRecord[];
}

export interface PublishedPolicy {
  /** The domain the report is about, lower-cased, without a final dot. */
  domain: string;
  p: string | null;
  sp: string | null;
  np: string | null;
  pct: number | null;
  adkim: string | null;
  aspf: string | null;
  fo: string | null;
  testing: string | null;
  discoveryMethod: string | null;
}

export interface ReportRecord {
  sourceIp: string;
  count: number;
  /** policy_evaluated: what the receiver did and whether DKIM and SPF passed aligned. */
  disposition: string | null;
  dkim: string | null;
  spf: string | null;
  reasons: Array<{ type: string | null; comment: string | null }>;
  headerFrom: string | null;
  envelopeFrom: string | null;
  envelopeTo: string | null;
  /** auth_results: the raw, unaligned results. */
  dkimResults: Array<{ domain: string | null; selector: string | null; result: string | null; humanResult: string | null }>;
  spfResults: Array<{ domain: string | null; scope: string | null; result: string | null; humanResult: string | null }>;
}

/** DMARC passes when DKIM or SPF passed aligned (RFC 7489 §6.6.2): what the receiver evaluated. */
export function passesDmarc(record: Pick<ReportRecord, 'dkim' | 'spf'>): boolean {
  return record.dkim === 'pass' || record.spf === 'pass';
}

/** Messages reported, and how many of them passed DMARC. */
export function reportCounts(report: Pick<AggregateReport, 'records'>): { messages: number; passed: number } {
  let messages = 0;
  let passed = 0;
  for (const r of report.records) {
    messages += r.count;
    if (passesDmarc(r)) passed += r.count;
  }
  return { messages, passed };
}
