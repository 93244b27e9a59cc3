/**
 * Why a DMARC aggregate report was not read. An engine speaks in its own terms: the inbound
 * listener logs `reason` and `message` on one line and answers the reporter 2xx all the same
 * (a reporter cannot fix its report, and a 5xx would make it retry or bounce to a human).
 */
export type DmarcRefusalReason =
  | 'too_large' // past maxXmlBytes, compressed or not
  | 'compression_ratio' // past maxCompressionRatio: a decompression bomb
  | 'bad_archive' // a gzip or zip that does not inflate, or whose checks fail
  | 'invalid_encoding' // not valid in its declared encoding (UTF-8 when none is declared)
  | 'dtd_forbidden' // a DOCTYPE or ENTITY declaration: no report has one, XXE and entity bombs do
  | 'invalid_xml' // not well-formed where the report is
  | 'not_a_report' // well-formed XML without a <feedback> element
  | 'too_many_records' // past maxRecords
  | 'missing_field' // a field every report must have (report_id, policy_published/domain, a row's source_ip...)
  | 'invalid_value'; // a field whose value cannot be what the schema says (a count that is not a number...)

export class DmarcReportRefused extends Error {
  constructor(
    readonly reason: DmarcRefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'DmarcReportRefused';
  }
}
