import type { Migration } from './migration.js';

/**
 * The event history of mails: opens, clicks, unsubscribes and complaints, shipped from the
 * Postgres event_outbox by the worker's event pump. Each row carries the attributes of
 * its mail that never change (msg_id, recipient, sender, subject, custom ids), so a listing
 * filtered and grouped on them is one range read on (instance_id, event_type, occurred_at).
 *
 * Idempotent by construction: event_id is the outbox row's id, and a batch shipped twice (a
 * worker dying between the insert and its Postgres commit) holds the same sorting key values, so
 * ReplacingMergeTree keeps one row per event. Exact counts read with FINAL (or count distinct
 * event_id); re-shipping a row with a new machine flag replaces it (latest shipped_at wins).
 * Rows expire with their mail's online retention (3 months after the mail's reception).
 */
export const migration: Migration = {
  version: '002',
  name: 'mail_events',
  up: [
    `CREATE TABLE IF NOT EXISTS mail_events
     (
       instance_id       UInt64,
       event_type        LowCardinality(String),
       occurred_at       DateTime64(3, 'UTC'),
       event_id          UInt64,
       mail_id           String,
       msg_id            String,
       recipient         String,
       sender_id         Nullable(UInt64),
       sender            Nullable(String),
       subject           String,
       custom_msg_id     Nullable(String),
       custom_group_code Nullable(String),
       mail_received_at  DateTime64(3, 'UTC'),
       sent_at           Nullable(DateTime64(3, 'UTC')),
       url               Nullable(String),
       user_agent        String,
       ip                String,
       machine           LowCardinality(String),
       shipped_at        DateTime64(3, 'UTC') DEFAULT now64(3, 'UTC')
     )
     ENGINE = ReplacingMergeTree(shipped_at)
     PARTITION BY toYYYYMM(occurred_at)
     ORDER BY (instance_id, event_type, occurred_at, event_id)
     TTL toDateTime(mail_received_at) + INTERVAL 3 MONTH`,
  ],
  down: ['DROP TABLE IF EXISTS mail_events'],
};
