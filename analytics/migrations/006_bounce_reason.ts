import type { Migration } from './migration.js';

/**
 * mail_events gains `bounce_reason` for the rows of a move to bounced (event_type 'bounced'):
 * why the mail bounced, in the bounce classifier's vocabulary (engines/bounces/reason.ts:
 * userunknown, mailboxfull, blocked, ...), the same value as the mail's mail_bounces row and its
 * log row in Postgres (sql/migrations/018_bounce_reasons.sql). Null on every other row, and on
 * bounces shipped before this column existed. LowCardinality: some thirty distinct values.
 */
export const migration: Migration = {
  version: '006',
  name: 'bounce_reason',
  up: [`ALTER TABLE mail_events ADD COLUMN IF NOT EXISTS bounce_reason LowCardinality(Nullable(String)) AFTER status`],
  down: ['ALTER TABLE mail_events DROP COLUMN IF EXISTS bounce_reason'],
};
