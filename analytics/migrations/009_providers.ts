import type { Migration } from './migration.js';

/**
 * The mails mirror and the events gain each mail's mailbox provider (Postgres mails.provider,
 * sql/migrations/032_mail_providers.sql; engines/providers/table.ts): gmail, yahoo, microsoft,
 * google_workspace, ..., other. The per-provider figures (analytics/deliverability/) group the
 * mirror's mails and the events by it, and data teams can too. A copy of the mail's attribute,
 * like recipient and sender: an event carries the provider its mail had when the event shipped.
 * Rows shipped before this column read 'other' (the DEFAULT), as Postgres gave their mails.
 * LowCardinality: some twenty values.
 */
export const migration: Migration = {
  version: '009',
  name: 'providers',
  up: [
    `ALTER TABLE mails ADD COLUMN IF NOT EXISTS provider LowCardinality(String) DEFAULT 'other' AFTER recipient`,
    `ALTER TABLE mail_events ADD COLUMN IF NOT EXISTS provider LowCardinality(String) DEFAULT 'other' AFTER recipient`,
  ],
  down: ['ALTER TABLE mail_events DROP COLUMN IF EXISTS provider', 'ALTER TABLE mails DROP COLUMN IF EXISTS provider'],
};
