// What the tenant role (cartero_tenant, every withTenant transaction) may do in Postgres:
// sql/migrations/009_least_privilege.sql. The flows that need its grants (send, track, inbound
// reports, restrictions) are covered by their own test files; this one proves the walls.
import t from 'tap';
import { acceptSend } from '../domain/mail/accept.js';
import { restrict } from '../domain/restrictions/restrictions.js';
import { withTenant } from '../domain/tenancy/context.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';

const dbs = await testDatabases(t, 'dbroles');
const a = await makeTenant(dbs.pool);
const b = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, a.tenant, { domain: 'a-send.example', senders: [{ email: 'news', name: 'A' }] });
await makeSenders(dbs.pool, b.tenant, { domain: 'b-send.example', senders: [{ email: 'news', name: 'B' }] });
const queue = jobQueue(dbs.databaseUrl);
// Tenant B owns rows in most tenant tables: a send (messages, mails, mail_logs, the outbox
// events its trigger writes) and a restriction.
await acceptSend(b.tenant, dbs.pool, queue, { from: 'news@b-send.example', to: [{ email: 'x@example.org' }], subject: 's', text: 't' });
await withTenant(dbs.pool, b.tenant, (c) => restrict(b.tenant, c, 'blocked@example.org', 'unspecified'));
await trackingSecret(dbs.pool); // none configured: the generated key's row is written
await dbs.pool.query("INSERT INTO worker_heartbeats (worker_id, hostname, pid) VALUES ('w-test', 'h', 1)");
await dbs.pool.query("INSERT INTO send_leases (worker_id, expires_at) VALUES ('w-test', now() + interval '1 hour')");

const DENIED = { code: '42501', message: /permission denied/ };
const asA = (sql: string, params: unknown[] = []) => withTenant(dbs.pool, a.tenant, (c) => c.query(sql, params));

t.test('service_secrets: the signing keys are out of the tenant role reach', async (t) => {
  const control = await dbs.pool.query("SELECT value FROM service_secrets WHERE name = 'tracking'");
  t.equal(control.rows.length, 1, 'control: the service role reads the tracking key');
  await t.rejects(asA('SELECT value FROM service_secrets'), DENIED, 'no SELECT');
  await t.rejects(asA("INSERT INTO service_secrets (name, value) VALUES ('report_tag:99', 'x')"), DENIED, 'no INSERT');
  await t.rejects(asA("UPDATE service_secrets SET value = 'x'"), DENIED, 'no UPDATE');
  await t.rejects(asA('DELETE FROM service_secrets'), DENIED, 'no DELETE');
});

t.test('shared tables the tenant role must not write', async (t) => {
  const id = a.tenant.instanceId;
  await t.rejects(asA("INSERT INTO instances (slug, name) VALUES ('intruder', 'x')"), DENIED, 'instances: no INSERT');
  await t.rejects(asA('UPDATE instances SET monthly_quota = NULL WHERE id = $1', [id]), DENIED, 'instances: not even its own row');
  await t.rejects(asA('DELETE FROM instances WHERE id = $1', [id]), DENIED, 'instances: no DELETE');
  await t.rejects(asA('SELECT * FROM worker_heartbeats'), DENIED, 'worker_heartbeats: no SELECT');
  await t.rejects(asA("INSERT INTO worker_heartbeats (worker_id, hostname, pid) VALUES ('fake', 'h', 1)"), DENIED, 'worker_heartbeats: no INSERT');
  await t.rejects(asA('UPDATE worker_heartbeats SET seen_at = now()'), DENIED, 'worker_heartbeats: no UPDATE');
  await t.rejects(asA('DELETE FROM worker_heartbeats'), DENIED, 'worker_heartbeats: no DELETE');
  const leases = await asA('SELECT worker_id FROM send_leases');
  t.equal(leases.rowCount, 1, 'send_leases: read (the send gates ask whether a holder lives)');
  await t.rejects(asA("INSERT INTO send_leases (worker_id, expires_at) VALUES ('fake', now())"), DENIED, 'send_leases: no INSERT');
  await t.rejects(asA("UPDATE send_leases SET expires_at = now() + interval '1 year'"), DENIED, 'send_leases: no UPDATE');
  await t.rejects(asA('DELETE FROM send_leases'), DENIED, 'send_leases: no DELETE');
  await t.rejects(asA('SELECT * FROM schema_migrations'), DENIED, 'schema_migrations: nothing');
  await t.rejects(asA("UPDATE api_keys SET revoked_at = NULL"), DENIED, 'api_keys: read-only');
});

t.test('instances: the tenant role sees its own row only', async (t) => {
  const rows = await asA('SELECT id FROM instances');
  t.same(rows.rows.map((r) => Number(r.id)), [a.tenant.instanceId]);
  const other = await asA('SELECT id FROM instances WHERE id = $1', [b.tenant.instanceId]);
  t.equal(other.rowCount, 0, 'asking for B by id returns nothing');
});

t.test('no table gives the tenant role another tenant rows', async (t) => {
  const tables = (
    await dbs.pool.query<{ table: string; column: string }>(
      `SELECT c.relname AS table, CASE WHEN c.relname = 'instances' THEN 'id' ELSE 'instance_id' END AS column
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND has_table_privilege('cartero_tenant', c.oid, 'SELECT')
          AND (c.relname = 'instances' OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'instance_id'))
        ORDER BY 1`,
    )
  ).rows;
  t.ok(tables.length >= 14, `every tenant table is checked (${tables.length})`);
  let populated = 0;
  for (const { table, column } of tables) {
    const q = `SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`;
    const service = (await dbs.pool.query<{ n: number }>(q, [b.tenant.instanceId])).rows[0]!.n;
    const tenant = (await asA(q, [b.tenant.instanceId])).rows[0]!.n;
    t.equal(tenant, 0, `${table}: none of B's ${service} rows`);
    if (service > 0) populated++;
  }
  t.ok(populated >= 7, `control: B has rows in ${populated} of these tables`);
});

t.test('every table the tenant role can read has row-level security, or is shared on purpose', async (t) => {
  // recipient_domains: public MX verdicts per domain, no instance in a row (sql/migrations/032).
  const SHARED = ['recipient_domains', 'send_leases'];
  const open = await dbs.pool.query<{ table: string }>(
    `SELECT c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'p')
        AND has_table_privilege('cartero_tenant', c.oid, 'SELECT')
        AND NOT (c.relrowsecurity AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid))
      ORDER BY 1`,
  );
  t.same(open.rows.map((r) => r.table), SHARED);
});

t.test('no table grants the tenant role DELETE, TRUNCATE or more', async (t) => {
  const wide = await dbs.pool.query<{ table: string; privilege: string }>(
    `SELECT c.relname AS table, p.privilege
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      CROSS JOIN unnest(ARRAY['DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS p(privilege)
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND has_table_privilege('cartero_tenant', c.oid, p.privilege)`,
  );
  t.same(wide.rows, []);
});

t.test('a table created by a later migration is closed to the tenant role until granted', async (t) => {
  await dbs.pool.query('CREATE TABLE db_roles_probe (id int)');
  t.teardown(() => dbs.pool.query('DROP TABLE IF EXISTS db_roles_probe'));
  const privs = await dbs.pool.query<{ any: boolean }>(
    `SELECT has_table_privilege('cartero_tenant', 'db_roles_probe', 'SELECT, INSERT, UPDATE, DELETE') AS any`,
  );
  t.equal(privs.rows[0]!.any, false);
  await t.rejects(asA('SELECT * FROM db_roles_probe'), DENIED);
});
