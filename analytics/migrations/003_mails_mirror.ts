import type { Migration } from './migration.js';

/**
 * Delivery history and the mirror of mail rows.
 *
 * mail_events gains `status` (1-7) for the rows of event_type 'status': one per state move of a
 * mail (received, queued, sent, dropped, deferred, bounced, onhold), from the same outbox.
 *
 * mails mirrors Postgres's mails table (the source of truth) for the sent and unopened listings:
 * the event pump ships a snapshot of a mail whenever an event of it ships (a move, an open, a
 * click), with `version` = the Postgres clock when the snapshot was read under the row's lock, so
 * the newest state wins in ReplacingMergeTree (read with FINAL). Keyed for range reads on
 * reception time, which never changes.
 */
export const migration: Migration = {
  version: '003',
  name: 'mails_mirror',
  up: [
    `ALTER TABLE mail_events ADD COLUMN IF NOT EXISTS status Nullable(UInt8) AFTER event_type`,
    `ALTER TABLE mail_events ADD INDEX IF NOT EXISTS mail_id_idx mail_id TYPE bloom_filter GRANULARITY 4`,
    `ALTER TABLE mail_events ADD INDEX IF NOT EXISTS msg_id_idx msg_id TYPE bloom_filter GRANULARITY 4`,
    `CREATE TABLE IF NOT EXISTS mails
     (
       instance_id       UInt64,
       received_at       DateTime64(3, 'UTC'),
       mail_id           String,
       msg_id            String,
       recipient         String,
       subject           String,
       sender_id         Nullable(UInt64),
       sender            Nullable(String),
       status            UInt8,
       bounce_class      LowCardinality(String),
       opens             UInt32,
       clicks            UInt32,
       queued_at         Nullable(DateTime64(3, 'UTC')),
       sent_at           Nullable(DateTime64(3, 'UTC')),
       delay             Nullable(Float64),
       custom_msg_id     Nullable(String),
       custom_group_code Nullable(String),
       version           UInt64,
       INDEX mail_id_idx mail_id TYPE bloom_filter GRANULARITY 4,
       INDEX msg_id_idx msg_id TYPE bloom_filter GRANULARITY 4
     )
     ENGINE = ReplacingMergeTree(version)
     PARTITION BY toYYYYMM(received_at)
     ORDER BY (instance_id, received_at, mail_id)
     TTL toDateTime(received_at) + INTERVAL 3 MONTH`,
  ],
  down: [
    'DROP TABLE IF EXISTS mails',
    'ALTER TABLE mail_events DROP INDEX IF EXISTS msg_id_idx',
    'ALTER TABLE mail_events DROP INDEX IF EXISTS mail_id_idx',
    'ALTER TABLE mail_events DROP COLUMN IF EXISTS status',
  ],
};
