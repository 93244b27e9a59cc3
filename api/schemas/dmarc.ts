import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateFilterQuery, dateTime, paginationQuery } from './common.js';

/** The two DMARC listings' query: the shared pagination and local dates (over the report's begin). */
export const dmarcListingQuery = {
  ...paginationQuery,
  start_date: { ...dateFilterQuery.start_date, description: "Local date YYYY-MM-DD in tz (inclusive): reports whose period began on or after it." },
  end_date: { ...dateFilterQuery.end_date, description: 'Local date YYYY-MM-DD in tz (inclusive): reports whose period began on or before it.' },
  tz: dateFilterQuery.tz,
} satisfies Record<string, JsonSchema>;

const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
const keyword = (description: string): JsonSchema => ({ type: ['string', 'null'], description: `${description} Lower-cased; null when the report left it out.` });

/** policy_published as the reporter saw it (the spec's seven fields; RFC 9990's fo, testing and discovery_method are in ClickHouse). */
const policySchema: JsonSchema = closedObject({
  domain: { type: 'string', description: 'The domain the policy was published for: this domain or one of its subdomains.' },
  p: keyword('Requested policy: none, quarantine or reject.'),
  sp: keyword('Policy for subdomains.'),
  np: keyword('Policy for non-existent subdomains (RFC 9990).'),
  pct: { type: ['integer', 'null'], description: 'Percentage the policy applied to (RFC 7489; RFC 9990 has none: null).' },
  adkim: keyword('DKIM alignment mode: r (relaxed) or s (strict).'),
  aspf: keyword('SPF alignment mode: r or s.'),
});

export const dmarcReportSchema: JsonSchema = closedObject({
  id: { type: 'integer', description: "The report's id in Cartero." },
  org_name: { type: 'string', description: 'The reporting organization (some reporters leave it empty).' },
  org_email: { type: ['string', 'null'], description: "The reporter's contact address." },
  report_id: { type: 'string', description: "The reporter's id of the report." },
  begin_at: { ...dateTime, description: 'Start of the reported period; the date filters apply to it.' },
  end_at: { ...dateTime, description: 'End of the reported period.' },
  schema: { type: 'string', enum: ['rfc7489', 'rfc9990'], description: 'The report format: RFC 9990 when it declares its namespace, else RFC 7489.' },
  policy: policySchema,
  message_count: count("Messages reported: the sum of the records' counts."),
  dmarc_pass_count: count("Messages whose policy_evaluated has DKIM or SPF pass (aligned): DMARC passed."),
  dmarc_fail_count: count('message_count - dmarc_pass_count.'),
  reporter_authenticated: { type: 'boolean', description: "The report mail passed DKIM for the reporter's domain. Reports are unauthenticated by nature: false ones may be forged." },
  received_at: { ...dateTime, description: 'When Cartero received the report.' },
});

export const dmarcSourceSchema: JsonSchema = closedObject({
  source_ip: { type: 'string', description: 'The address the reported messages came from, as the reports wrote it.' },
  message_count: count('Messages from this address in the reports of the range.'),
  dmarc_pass_count: count('Of them, those that passed DMARC (DKIM or SPF pass, aligned).'),
  dkim_aligned_pass_count: count('Those whose DKIM passed aligned.'),
  spf_aligned_pass_count: count('Those whose SPF passed aligned.'),
  dispositions: closedObject({
    none: count('Delivered as usual.'),
    quarantine: count('Quarantined (spam folder).'),
    reject: count('Rejected.'),
  }),
  header_from: { type: ['string', 'null'], description: 'The From domain of most of these messages (ties: the first in text order); null when no report gave one.' },
  reporters: { type: 'array', items: { type: 'string' }, description: 'The organizations that reported this address, sorted.' },
  cartero_signed_count: count("Messages whose DKIM results include a pass by one of this domain's Cartero selectors: mail sent through Cartero."),
});
