import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../config/paths.js';
import type { Client, Pool } from './pool.js';
import { withTransaction } from './pool.js';

const MIGRATIONS_DIR = join(projectRoot, 'sql', 'migrations');
// Serializes migrators (two release dynos, or a CLI and `npm start` at once) per database.
const MIGRATION_LOCK = 726_411_001;

export interface MigrationResult {
  applied: string[];
}

/** The migration files this code ships, in order (`NNN_name.sql`). */
async function shippedFiles(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
}

/** `021_webhook_fanout_fair.sql` → `021_webhook_fanout_fair`, as the refusal names a version. */
function label(file: string): string {
  return file.replace(/\.sql$/, '');
}

/**
 * The database holds a migration this code does not ship: it was migrated by a newer release
 * (or by code whose migrations this one lacks). Running against a schema it does not know would
 * write rows the newer code does not expect, so every process refuses to start instead
 * (graphile-worker does the same), and migrating refuses too: there is nothing safe to apply.
 */
export class SchemaTooNew extends Error {
  constructor(
    readonly databaseVersion: string,
    readonly codeVersion: string,
    newer: boolean,
  ) {
    super(
      newer
        ? `the database was migrated by newer code (${databaseVersion}), this code knows up to ${codeVersion}: deploy the newer code or restore`
        : `the database has migration ${databaseVersion}, which this code does not ship (it knows up to ${codeVersion}): deploy the code that migrated it or restore`,
    );
    this.name = 'SchemaTooNew';
  }
}

/**
 * Throws SchemaTooNew when schema_migrations names a version this code has no file for. A
 * database never migrated (no schema_migrations yet) passes: there is nothing it does not know.
 */
async function assertKnownSchema(c: Pool | Client, files: string[]): Promise<void> {
  const exists = await c.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return;
  const known = new Set(files.map((f) => f.slice(0, 3)));
  const { rows } = await c.query<{ version: string; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version DESC');
  const unknown = rows.find((r) => !known.has(r.version));
  if (!unknown) return;
  const newest = files.at(-1);
  const codeVersion = newest ? label(newest) : 'none';
  throw new SchemaTooNew(label(unknown.name), codeVersion, newest === undefined || unknown.version > newest.slice(0, 3));
}

/**
 * At the start of every process that uses the database (web, worker): refuse a schema migrated
 * by code newer than this one (SchemaTooNew) rather than run against it.
 */
export async function checkSchemaVersion(pool: Pool): Promise<void> {
  await assertKnownSchema(pool, await shippedFiles());
}

/**
 * Applies sql/migrations/NNN_name.sql in order. The pending files run in one transaction together
 * with the inserts of their version rows, so a migration is either applied and recorded or not at
 * all, and a second migrator blocks on the advisory lock and then finds nothing to do.
 * `through` stops after that version (tests build a database as an older release left it, put
 * rows in it, then migrate the rest: an upgrade with data). A database holding a migration this
 * code does not ship is refused (SchemaTooNew) before anything is applied.
 */
export async function migratePostgres(pool: Pool, opts: { through?: string } = {}): Promise<MigrationResult> {
  const shipped = await shippedFiles();
  const files = shipped.filter((f) => opts.through === undefined || f.slice(0, 3) <= opts.through);
  const applied: string[] = [];
  await withTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await c.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    // Under the lock: a newer release migrating at the same moment is seen, never raced.
    await assertKnownSchema(c, shipped);
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
