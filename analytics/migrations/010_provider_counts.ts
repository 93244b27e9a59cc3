import type { Migration } from './migration.js';

/**
 * The per-provider figures' counts, kept per 15 minutes (analytics/deliverability/rollup.ts), so
 * GET /v1/deliverability/providers reads a few thousand rows instead of every mail's newest
 * snapshot (`mails FINAL` over 10 M mails took 0.7-1.4 s of a 1.1-2.4 s answer, issue 40).
 *
 * count_marks: per instance, source ('received': the mails mirror by reception time; 'events':
 * complaints, unsubscribes and opens by event time) and 15-minute bucket, when rows last arrived.
 * Filled by two materialized views on every insert (now64() is the insert's time), so whatever
 * writes the mirror (the pump, a backfill, a data team) marks its buckets. max() is idempotent,
 * so copies and merges change nothing. Then a backfill marks the rows already there.
 *
 * provider_counts: one row per instance, source and bucket, with the bucket's counts per
 * (provider, sending domain) in parallel arrays, and `covered`, the newest mark they include. A
 * bucket whose newest mark is later than its row's `covered` is read live instead
 * (docs/deliverability.md, "How the figures stay fast"). A recount replaces the bucket's row
 * whole (ReplacingMergeTree by covered), so a combination that disappeared does not linger. Each
 * source fills its own count arrays (received: sent to bounced_soft; events: complaints to
 * opened_human) and leaves the others empty, so a read joins only the arrays it sums.
 *
 * Buckets of 15 minutes: every zone's offset today is a multiple of 15 minutes, so a local day
 * is a whole number of buckets and each bucket lies in one local day. Same TTL as the mirror.
 * (The source is not called 'mails': in cluster mode a table's name is rewritten to its local
 * table's wherever it stands, analytics/sharding.ts, string literals included.)
 */
const marksView = (source: string, from: string, time: string, where = '') =>
  `SELECT instance_id, '${source}' AS source, toStartOfFifteenMinutes(${time}) AS bucket, max(now64(3)) AS inserted_at
     FROM ${from}${where} GROUP BY instance_id, bucket`;
const EVENTS_WHERE = ` WHERE event_type IN ('complaint', 'unsubscribe', 'open')`;
const COUNTS = ['sent', 'delivered', 'deferred', 'bounced_hard', 'bounced_soft', 'complaints', 'unsubscribed', 'opened', 'opened_human'];

export const migration: Migration = {
  version: '010',
  name: 'provider_counts',
  up: [
    `CREATE TABLE IF NOT EXISTS count_marks
     (
       instance_id UInt64,
       source      LowCardinality(String),
       bucket      DateTime('UTC'),
       inserted_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
     )
     ENGINE = AggregatingMergeTree
     PARTITION BY toYYYYMM(bucket)
     ORDER BY (instance_id, source, bucket)
     TTL bucket + INTERVAL 3 MONTH`,
    `CREATE TABLE IF NOT EXISTS provider_counts
     (
       instance_id UInt64,
       source      LowCardinality(String),
       bucket      DateTime('UTC'),
       covered     DateTime64(3, 'UTC'),
       provider    Array(LowCardinality(String)),
       domain      Array(LowCardinality(String)),
       ${COUNTS.map((c) => `${c} Array(UInt32)`).join(',\n       ')}
     )
     ENGINE = ReplacingMergeTree(covered)
     PARTITION BY toYYYYMM(bucket)
     ORDER BY (instance_id, source, bucket)
     TTL bucket + INTERVAL 3 MONTH`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS count_marks_mails_mv TO count_marks AS ${marksView('received', 'mails', 'received_at')}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS count_marks_events_mv TO count_marks AS ${marksView('events', 'mail_events', 'occurred_at', EVENTS_WHERE)}`,
    `INSERT INTO count_marks (instance_id, source, bucket, inserted_at) ${marksView('received', 'mails', 'received_at')}`,
    `INSERT INTO count_marks (instance_id, source, bucket, inserted_at) ${marksView('events', 'mail_events', 'occurred_at', EVENTS_WHERE)}`,
  ],
  down: [
    'DROP VIEW IF EXISTS count_marks_events_mv',
    'DROP VIEW IF EXISTS count_marks_mails_mv',
    'DROP TABLE IF EXISTS provider_counts',
    'DROP TABLE IF EXISTS count_marks',
  ],
};
