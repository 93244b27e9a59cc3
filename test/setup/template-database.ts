import { createHash } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../config/config.js';
import { projectRoot } from '../../config/paths.js';
import { migratePostgresSide } from '../../runtime/migrations.js';
import { createPool } from '../../sql/pool.js';

/**
 * The suite's template database: migrated once per run by the release's own Postgres half
 * (migratePostgresSide in runtime/migrations.ts: the schema, the sandbox domain, pg-boss and its
 * queues), then copied for each test file by `CREATE DATABASE … TEMPLATE`
 * (test/helpers/databases.ts), which takes a fraction of the time.
 *
 * Its name keeps the `cartero_test_` prefix the destructive helpers demand, and cannot be taken
 * for a file's database (`cartero_test_<label>_<8 hex>`: a label has no underscore, "template" is
 * not hex). One name per checkout (a hash of its path), so runs from other checkouts against the
 * same Postgres (the machine's, on 127.0.0.1:5432) keep theirs; a run in the same checkout
 * replaces the one a crashed run left.
 */
export function templateDatabaseName(): string {
  return `cartero_test__template_${createHash('sha256').update(projectRoot).digest('hex').slice(0, 8)}`;
}

export async function createTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  const id = pg.escapeIdentifier(name);
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${id} WITH (FORCE)`);
  await adminQuery(adminUrl, `CREATE DATABASE ${id}`);
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  // The process environment's settings; a file whose SEND_RETRY_* or SANDBOX_DOMAIN differ gets
  // them applied to its copy (runMigrations again, in testDatabases).
  const config = loadConfig(process.env);
  const pool = createPool(url, { max: 2, application: 'cartero-test-template' });
  try {
    await migratePostgresSide(pool, { databaseUrl: url, send: config.send, sandboxDomain: config.domains.sandboxDomain });
  } finally {
    await pool.end();
  }
  // Copying fails while anyone is connected to the template ("source database is being accessed
  // by other users"): after the migrators' own connections (closed above), nobody may connect.
  await adminQuery(adminUrl, `ALTER DATABASE ${id} WITH ALLOW_CONNECTIONS false`);
}

export async function dropTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}
