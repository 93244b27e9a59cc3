/**
 * What one aggregate report may cost. Reports come from anyone who can reach the MX, unsigned
 * by nature (RFC 7489 §7.1): every limit holds before the work it bounds is done, so a hostile
 * report is refused having cost at most these figures. docs/security.md lists them.
 */
export const DMARC_LIMITS = {
  /**
   * Decompressed XML, per report. The largest real reports seen (a big reporter, a day, a busy
   * domain) have some tens of thousands of records at ~600 bytes each; 64 MiB leaves room for
   * 100,000 records.
   */
  maxXmlBytes: 64 * 1024 * 1024,
  /**
   * Decompressed ÷ compressed size. DMARC XML is repetitive and compresses 10–40×; deflate's own
   * ceiling is ~1,032×. Past 200× it is a bomb: inflating stops at 200 × the compressed size
   * (or at maxXmlBytes, whichever comes first), so a 300 MB gzip bomb (~300 KB compressed)
   * is refused after at most 60 MB of output, never inflated whole.
   */
  maxCompressionRatio: 200,
  /** Records (`<record>` elements) per report. */
  maxRecords: 100_000,
  /** Files read from one zip archive (reporters send one). */
  maxZipEntries: 8,
  /** Reports read from one mail (attachments and body together). */
  maxReportsPerMail: 20,
  /** Characters kept of a free-text value (a reason's comment, extra_contact_info...). */
  maxTextLength: 1_024,
} as const;

/** The limits a caller may set (tests lower them; the listener uses DMARC_LIMITS). */
export type DmarcLimits = { readonly [K in keyof typeof DMARC_LIMITS]: number };
