import type { Migration } from './migration.js';

/**
 * Opens and clicks again, sorted by message: the second pass of the group_by=msg_id listings
 * (analytics/activities/filters.ts) aggregates every event of the page's ~100 messages over the
 * range, and in mail_events (time order) those events are spread over every granule of days of
 * data, mixed with thousands of other messages: with a campaign filter the pass read 1.8 M rows
 * for 70 k (docs/performance-history.md). Here they are contiguous, and the small granules (1,024 rows)
 * keep the read near the rows wanted.
 *
 * Filled by a materialized view on every insert into mail_events (the pump's shipments, the
 * bench's bulk loads), so the two tables hold the same open and click rows, copies included:
 * same key columns plus msg_id in front, same ReplacingMergeTree(shipped_at) version rule, same
 * TTL. Only the columns those listings read (url: links_clicked). The backfill after the view copies what was there
 * before it; rows inserted meanwhile arrive twice, with the same key and version, which the
 * engine merges and the queries deduplicate (LIMIT 1 BY event_id), so repeating it is harmless.
 */
const COLUMNS = `instance_id, event_type, msg_id, occurred_at, event_id, mail_id, recipient, sender_id, sender, subject,
  custom_msg_id, custom_group_code, mail_received_at, url, machine, shipped_at`;

export const migration: Migration = {
  version: '004',
  name: 'events_by_message',
  up: [
    `CREATE TABLE IF NOT EXISTS mail_events_by_msg
     (
       instance_id       UInt64,
       event_type        LowCardinality(String),
       msg_id            String,
       occurred_at       DateTime64(3, 'UTC'),
       event_id          UInt64,
       mail_id           String,
       recipient         String,
       sender_id         Nullable(UInt64),
       sender            Nullable(String),
       subject           String,
       custom_msg_id     Nullable(String),
       custom_group_code Nullable(String),
       mail_received_at  DateTime64(3, 'UTC'),
       url               Nullable(String),
       machine           LowCardinality(String),
       shipped_at        DateTime64(3, 'UTC')
     )
     ENGINE = ReplacingMergeTree(shipped_at)
     PARTITION BY toYYYYMM(occurred_at)
     ORDER BY (instance_id, event_type, msg_id, occurred_at, event_id)
     TTL toDateTime(mail_received_at) + INTERVAL 3 MONTH
     SETTINGS index_granularity = 1024`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS mail_events_by_msg_mv TO mail_events_by_msg AS
     SELECT ${COLUMNS} FROM mail_events WHERE event_type IN ('open', 'click')`,
    `INSERT INTO mail_events_by_msg (${COLUMNS})
     SELECT ${COLUMNS} FROM mail_events WHERE event_type IN ('open', 'click')`,
  ],
  down: ['DROP VIEW IF EXISTS mail_events_by_msg_mv', 'DROP TABLE IF EXISTS mail_events_by_msg'],
};
