import type { Migration } from './migration.js';

/**
 * The mails mirror gains each mail's human opens and clicks (Postgres mails.human_opens /
 * human_clicks, sql/migrations/029_human_counts.sql): the sent listing's Mail rows carry them
 * beside opens and clicks. Nullable as in Postgres: null for a mail opened or clicked before the
 * counts existed, and on every snapshot shipped before this column (the mail's next snapshot,
 * at its next event, brings the number).
 */
export const migration: Migration = {
  version: '007',
  name: 'human_counts',
  up: [
    `ALTER TABLE mails ADD COLUMN IF NOT EXISTS human_opens Nullable(UInt32) AFTER clicks`,
    `ALTER TABLE mails ADD COLUMN IF NOT EXISTS human_clicks Nullable(UInt32) AFTER human_opens`,
  ],
  down: ['ALTER TABLE mails DROP COLUMN IF EXISTS human_clicks', 'ALTER TABLE mails DROP COLUMN IF EXISTS human_opens'],
};
