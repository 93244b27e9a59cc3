import t from 'tap';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config/config.js';
import { createLogger } from '../runtime/logger.js';
import { projectRoot } from '../config/paths.js';
import { startWeb } from '../runtime/web.js';
import { startWorker } from '../runtime/worker.js';
import { checkSchemaVersion, migratePostgres, SchemaTooNew } from '../sql/migrate.js';
import { emptyTestDatabase } from './helpers/databases.js';
import { childEnv, spawnNode, TEST_DKIM_KEY } from './helpers/spawn.js';

/**
 * A database migrated by newer code than the running one (issue 25, section 3): web, worker and
 * release refuse to start with a message naming both versions, instead of running against a
 * schema they do not know. The future migration is a row in schema_migrations, as a newer release
 * would have left it.
 */

const shipped = readdirSync(join(projectRoot, 'sql', 'migrations')).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
const newest = shipped.at(-1)!.replace(/\.sql$/, '');
// One past whatever this code ships, so the test keeps meaning the same as migrations are added.
const futureVersion = String(Number(newest.slice(0, 3)) + 1).padStart(3, '0');
const future = `${futureVersion}_from_the_future`;
const REFUSAL = `the database was migrated by newer code (${future}), this code knows up to ${newest}: deploy the newer code or restore`;

const db = await emptyTestDatabase(t, 'schemaversion');
await migratePostgres(db.pool);
// Nothing answers here: a refused process must stop before it reaches ClickHouse.
const NO_CLICKHOUSE = 'http://127.0.0.1:9/cartero';
const env = { DATABASE_URL: db.databaseUrl, CLICKHOUSE_URL: NO_CLICKHOUSE, PORT: '0', LOG_LEVEL: 'info', DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY };
const DB_ENV = ['DATABASE_URL', 'CLICKHOUSE_URL', 'DATA_DIR', 'PORT', 'INTERNAL_PORT', 'SMTP_URL', 'INBOUND_SMTP_PORT'];

const addFuture = () => db.pool.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [futureVersion, `${future}.sql`]);
const removeFuture = () => db.pool.query('DELETE FROM schema_migrations WHERE version = $1', [futureVersion]);

t.test('the normal case: a database at this code\'s version is accepted', async (t) => {
  await t.resolves(checkSchemaVersion(db.pool), 'the start check passes');
  t.same((await migratePostgres(db.pool)).applied, [], 'migrating again applies nothing and does not refuse');
  const web = await startWeb(loadConfig({ ...env, INTERNAL_PORT: undefined }), createLogger('silent', 'web'));
  t.equal((await fetch(web.url.replace('localhost', '127.0.0.1') + '/healthz')).status, 200, 'the web dyno starts and answers');
  await web.stop();
});

t.test('a database migrated by newer code: every process refuses, naming both versions', async (t) => {
  await addFuture();
  t.teardown(removeFuture);

  await t.rejects(checkSchemaVersion(db.pool), new SchemaTooNew(future, newest, true), 'the start check refuses');
  t.equal(await checkSchemaVersion(db.pool).catch((e: Error) => e.message), REFUSAL, 'with the message an operator acts on');

  const before = (await db.pool.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n;
  await t.rejects(migratePostgres(db.pool), { message: REFUSAL }, 'migrating refuses too');
  t.equal((await db.pool.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n, before, 'and records nothing');

  const config = loadConfig({ ...env, INTERNAL_PORT: undefined });
  await t.rejects(startWeb(config, createLogger('silent', 'web')), { message: REFUSAL }, 'startWeb refuses');
  await t.rejects(startWorker(config, createLogger('silent', 'worker')), { message: REFUSAL }, 'startWorker refuses');

  for (const dyno of ['web', 'worker', 'release']) {
    const proc = spawnNode(t, `dist/runtime/${dyno}.js`, { env: childEnv(env, DB_ENV) });
    const exit = await proc.waitExit(30_000);
    t.ok(exit, `${dyno}: the process exits by itself`);
    t.equal(exit?.code, 1, `${dyno}: exit code 1`);
    t.match(proc.stdout() + proc.stderr(), REFUSAL, `${dyno}: the log says why, naming both versions`);
  }
});

t.test('a migration this code does not ship, older than its newest, is refused as well', async (t) => {
  await db.pool.query("INSERT INTO schema_migrations (version, name) VALUES ('000', '000_lost.sql')");
  t.teardown(() => db.pool.query("DELETE FROM schema_migrations WHERE version = '000'"));
  await t.rejects(checkSchemaVersion(db.pool), {
    message: `the database has migration 000_lost, which this code does not ship (it knows up to ${newest}): deploy the code that migrated it or restore`,
  });
});

t.test('after the row is gone (the newer code was rolled back with its migration), the processes start again', async (t) => {
  await t.resolves(checkSchemaVersion(db.pool));
  const web = spawnNode(t, 'dist/runtime/web.js', { env: childEnv({ ...env, LOG_LEVEL: 'info' }, DB_ENV) });
  await web.waitForStdout(/web started/, 30_000);
  t.pass('the web dyno started');
  web.signal('SIGTERM');
  t.equal((await web.waitExit(20_000))?.code, 0, 'and stops cleanly');
});
