import type { Migration } from './migration.js';

// A small key/value table the service itself reads and writes (e.g. readiness checks that must
// prove the analytics database is writable, not only that the server answers /ping).
export const migration: Migration = {
  version: '001',
  name: 'init',
  up: [
    `CREATE TABLE IF NOT EXISTS service_info
     (
       key        String,
       value      String,
       updated_at DateTime64(3, 'UTC')
     )
     ENGINE = ReplacingMergeTree(updated_at)
     ORDER BY key`,
  ],
  down: ['DROP TABLE IF EXISTS service_info'],
};
