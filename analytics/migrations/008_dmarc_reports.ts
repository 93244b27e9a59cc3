import type { Migration } from './migration.js';

/**
 * DMARC aggregate reports (issue 39): what mailbox providers report about a sender domain, read
 * by the inbound listener (smtp/inbound.ts), kept in Postgres's dmarc_reports until the worker's
 * DMARC shipper (workers/jobs/dmarc-ship.ts) brings them here, where the two listings of
 * GET /v1/domains/{domain_name}/dmarc-* read them and data teams query them beside mails and
 * events (docs/analytics.md, "DMARC reports").
 *
 *  - dmarc_reports: one row per stored report. report_key is the Postgres row's id, which is
 *    unique per (instance, domain, reporter org_name, report_id): a report resent, or sent in
 *    both formats, is one Postgres row and so one key here.
 *  - dmarc_records: one row per record (source IP and its results) of a report, in the
 *    report's order (row_number), with the report's period and reporter copied so a listing of
 *    sources is one range read on (instance_id, domain, begin_at).
 *
 * Idempotent as the mail tables are: a report shipped twice (a shipper dying between the insert
 * and its Postgres commit) has the same sorting keys, and ReplacingMergeTree keeps one copy (read
 * with FINAL). Kept 13 months after they arrived (a year of history to compare), counted from
 * arrival, not from the reported period: a late or old report is kept as long as any other.
 */
export const migration: Migration = {
  version: '008',
  name: 'dmarc_reports',
  up: [
    `CREATE TABLE IF NOT EXISTS dmarc_reports
     (
       instance_id            UInt64,
       domain                 String,
       begin_at               DateTime('UTC'),
       report_key             UInt64,
       end_at                 DateTime('UTC'),
       org_name               String,
       org_email              Nullable(String),
       report_id              String,
       schema                 LowCardinality(String),
       policy_domain          String,
       policy_p               LowCardinality(Nullable(String)),
       policy_sp              LowCardinality(Nullable(String)),
       policy_np              LowCardinality(Nullable(String)),
       policy_pct             Nullable(UInt8),
       policy_adkim           LowCardinality(Nullable(String)),
       policy_aspf            LowCardinality(Nullable(String)),
       policy_fo              Nullable(String),
       policy_testing         LowCardinality(Nullable(String)),
       policy_discovery       LowCardinality(Nullable(String)),
       generator              Nullable(String),
       message_count          UInt64,
       dmarc_pass_count       UInt64,
       dmarc_fail_count       UInt64,
       record_count           UInt32,
       reporter_authenticated Bool,
       received_at            DateTime64(3, 'UTC'),
       shipped_at             DateTime64(3, 'UTC') DEFAULT now64(3, 'UTC')
     )
     ENGINE = ReplacingMergeTree(shipped_at)
     PARTITION BY toYYYYMM(begin_at)
     ORDER BY (instance_id, domain, begin_at, report_key)
     TTL toDateTime(received_at) + INTERVAL 13 MONTH`,
    `CREATE TABLE IF NOT EXISTS dmarc_records
     (
       instance_id      UInt64,
       domain           String,
       begin_at         DateTime('UTC'),
       report_key       UInt64,
       row_number       UInt32,
       end_at           DateTime('UTC'),
       org_name         String,
       source_ip        String,
       count            UInt64,
       disposition      LowCardinality(String),
       dkim_aligned     LowCardinality(String),
       spf_aligned      LowCardinality(String),
       header_from      String,
       envelope_from    Nullable(String),
       envelope_to      Nullable(String),
       reason_types     Array(LowCardinality(String)),
       reason_comments  Array(String),
       dkim_domains     Array(String),
       dkim_selectors   Array(String),
       dkim_results     Array(LowCardinality(String)),
       spf_domains      Array(String),
       spf_scopes       Array(LowCardinality(String)),
       spf_results      Array(LowCardinality(String)),
       cartero_signed   Bool,
       shipped_at       DateTime64(3, 'UTC') DEFAULT now64(3, 'UTC')
     )
     ENGINE = ReplacingMergeTree(shipped_at)
     PARTITION BY toYYYYMM(begin_at)
     ORDER BY (instance_id, domain, begin_at, report_key, row_number)
     TTL toDateTime(shipped_at) + INTERVAL 13 MONTH`,
  ],
  down: ['DROP TABLE IF EXISTS dmarc_records', 'DROP TABLE IF EXISTS dmarc_reports'],
};
