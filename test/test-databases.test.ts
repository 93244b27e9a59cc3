// The suite's own database helpers (test/helpers/databases.ts, test/setup/): each file's Postgres
// is a copy of the run's migrated template, its ClickHouse a database of its own in the suite's
// server, both gone after its teardown; the template takes no connections (one would make every
// copy fail).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import t from 'tap';
import { createClickHouseClient, databaseOf } from '../analytics/client.js';
import { projectRoot } from '../config/paths.js';
import { testDatabases } from './helpers/databases.js';
import { testEnv } from './setup/env.js';

const env = testEnv();
const shipped = readdirSync(join(projectRoot, 'sql', 'migrations')).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f));
const server = createClickHouseClient(`${env.clickhouse.url}/default`);
t.teardown(() => server.close());
const chDatabases = async () =>
  (await (await server.query({ query: "SELECT name FROM system.databases WHERE name LIKE 'cartero_test_%'", format: 'JSONEachRow' })).json<{ name: string }>()).map((r) => r.name);
const pgDatabases = async () => {
  const admin = new pg.Client({ connectionString: env.postgresAdminUrl });
  await admin.connect();
  try {
    return (await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'cartero_test_%'")).rows.map((r) => r.datname);
  } finally {
    await admin.end();
  }
};

let name = '';
await t.test('a file gets a migrated copy and a ClickHouse database of its own', async (t) => {
  const dbs = await testDatabases(t, 'testdbs');
  name = new URL(dbs.databaseUrl).pathname.slice(1);
  t.not(name, env.templateDatabase, 'not the template itself');
  const { rows } = await dbs.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
  t.equal(rows[0]!.n, shipped.length, 'every shipped migration is recorded, copied from the template');
  const boss = await dbs.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pgboss.queue');
  t.ok(boss.rows[0]!.n > 0, "pg-boss's schema and queues are there");
  t.equal(databaseOf(dbs.clickhouseUrl), name, 'its ClickHouse database is named like its Postgres one');
  t.equal(new URL(dbs.clickhouseUrl).port, new URL(env.clickhouse.url).port, "in the suite's server");
  const ch = createClickHouseClient(dbs.clickhouseUrl);
  t.teardown(() => ch.close());
  const tables = await (await ch.query({ query: 'SELECT count() AS n FROM system.tables WHERE database = currentDatabase()', format: 'JSONEachRow' })).json<{ n: string }>();
  t.ok(Number(tables[0]!.n) > 1, 'migrated');
  t.equal(dbs.clickhouse, undefined, 'no handle that could stop the shared server');
});

t.test('its teardown drops both databases and leaves the template and the server', async (t) => {
  t.ok(name, 'the first test made its databases');
  t.notOk((await chDatabases()).includes(name), 'ClickHouse database dropped');
  const left = await pgDatabases();
  t.notOk(left.includes(name), 'Postgres database dropped');
  t.ok(left.includes(env.templateDatabase), 'the template stays for the other files');
  t.ok((await server.ping()).success, "the suite's ClickHouse still answers");
});

t.test('the template refuses connections, so nothing can hold it and block a copy', async (t) => {
  const url = Object.assign(new URL(env.postgresAdminUrl), { pathname: `/${env.templateDatabase}` }).toString();
  const c = new pg.Client({ connectionString: url });
  await t.rejects(c.connect(), { message: /not currently accepting connections/ });
  await c.end().catch(() => {});
});
