import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../runtime/paths.js';
import type { Pool } from './pool.js';
import { withTransaction } from './pool.js';

const MIGRATIONS_DIR = join(projectRoot, 'sql', 'migrations');
// Serializes migrators (two release dynos, or a CLI and `npm start` at once) per database.
const MIGRATION_LOCK = 726_411_001;

export interface MigrationResult {
  applied: string[];
}

/**
 * Applies sql/migrations/NNN_name.sql in order. The pending files run in one transaction together
 * with the inserts of their version rows, so a migration is either applied and recorded or not at
 * all, and a second migrator blocks on the advisory lock and then finds nothing to do.
 * `through` stops after that version (tests build a database as an older release left it, put
 * rows in it, then migrate the rest: an upgrade with data).
 */
export async function migratePostgres(pool: Pool, opts: { through?: string } = {}): Promise<MigrationResult> {
  const files = (await readdir(MIGRATIONS_DIR))
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f) && (opts.through === undefined || f.slice(0, 3) <= opts.through))
    .sort();
  const applied: string[] = [];
  await withTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await c.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await c.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const file of files) {
      const version = file.slice(0, 3);
      if (done.has(version)) continue;
      const sql = await readFile(join(MIGRATIONS_DIR, file), 'utf8');
      try {
        await c.query(sql);
        await c.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, file]);
      } catch (err) {
        throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(file);
    }
  });
  return { applied };
}

/** Run fn while holding the migration lock (used to serialize ClickHouse migrations too). */
export async function withMigrationLock<T>(pool: Pool, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK + 1]);
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK + 1]);
    }
  } finally {
    client.release();
  }
}
