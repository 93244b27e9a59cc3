// Upgrading a database that has rows: migration 011 renames the Postgres outbox mail_events to
// event_outbox and drops the event logs' copies of the mail's address
// (sql/migrations/011_event_outbox.sql). The database is built as release 010 left
// it, filled by the code paths of the time and by rows as the old writers wrote them, then
// migrated the rest of the way; the other test files only ever see fresh databases.
import t from 'tap';
import { listComplaints } from '../domain/complaints/list.js';
import { recordComplaint } from '../domain/complaints/record.js';
import { acceptSend } from '../domain/mail/accept.js';
import { OUTBOX_EVENT_KINDS } from '../domain/outbox/kinds.js';
import { claimNew } from '../domain/outbox/pump.js';
import { withTenant } from '../domain/tenancy/context.js';
import { listUnsubscribes } from '../domain/unsubscribes/list.js';
import { loadConfig } from '../config/config.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { migrateQueue } from '../workers/machinery/queue-migration.js';
import { migratePostgres } from '../sql/migrate.js';
import { withTransaction } from '../sql/pool.js';
import { emptyTestDatabase } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';

const { databaseUrl, pool } = await emptyTestDatabase(t, 'outboxupgrade');
await migratePostgres(pool, { through: '010' });
await migrateQueue(databaseUrl, loadConfig(process.env).send);
const a = await makeTenant(pool);
const b = await makeTenant(pool);
// The verified domain and its sender as 010's tables hold them: today's domain code writes columns
// of later migrations (the DKIM override mark of 019), so SQL of the time.
const { rows: [domain] } = await pool.query(
  `INSERT INTO domains (instance_id, name, mx_status, spf_status, dkim_status, dmarc_status) VALUES ($1, 'a-send.example', 'approved', 'approved', 'approved', 'approved') RETURNING id`,
  [a.tenant.instanceId],
);
await pool.query(`INSERT INTO senders (instance_id, domain_id, name, email_address) VALUES ($1, $2, 'A', 'news@a-send.example')`, [a.tenant.instanceId, domain.id]);
const queue = jobQueue(databaseUrl);
const send = (to: string) => acceptSend(a.tenant, pool, queue, { from: 'news@a-send.example', to: [{ email: to }], subject: 's', text: 't' });
// Today's acceptance reads the sandbox mark of 027: lent to the old schema while it sends, taken
// back before the upgrade (which adds it for real).
await pool.query('ALTER TABLE domains ADD COLUMN is_sandbox boolean NOT NULL DEFAULT false');
// Today's acceptance writes each mail's provider (032): lent to the old schema, taken back before the upgrade.
await pool.query(`ALTER TABLE mails ADD COLUMN provider text NOT NULL DEFAULT 'other'`);

// At 010: acceptance's mail_logs rows wrote 'status' events through the trigger; an open already
// shipped, a flagged click counted but not shipped, an unsubscribe event still new.
const [opened, clicked] = [(await send('Opened@Example.org')).mails[0]!.mail_id, (await send('clicked@example.org')).mails[0]!.mail_id];
await pool.query(
  `INSERT INTO mail_events (instance_id, mail_id, kind, url, user_agent, ip, machine, stage) VALUES
     ($1, $2, 'open', NULL, 'Mozilla/5.0', '192.0.2.1', NULL, 2),
     ($1, $3, 'click', 'https://shop.example/a', 'python-requests/2.31', '192.0.2.2', 'link_scanner', 1),
     ($1, $2, 'unsubscribe', NULL, 'Mozilla/5.0', NULL, NULL, 0)`,
  [a.tenant.instanceId, opened, clicked],
);
// Their unsubscribe and complaint rows, with the copy of the address 010 still kept.
await pool.query(`INSERT INTO mail_unsubscribes (instance_id, mail_id, recipient, method) VALUES ($1, $2, 'opened@example.org', 'one_click')`, [a.tenant.instanceId, opened]);
await pool.query(`INSERT INTO mail_complaints (instance_id, mail_id, recipient, feedback_type) VALUES ($1, $2, 'opened@example.org', 'abuse')`, [a.tenant.instanceId, opened]);
const OUTBOX_COLUMNS = 'id, instance_id, mail_id, kind, status, url, user_agent, host(ip) AS ip, occurred_at, machine, stage';
const before = (await pool.query(`SELECT ${OUTBOX_COLUMNS} FROM mail_events ORDER BY id`)).rows;
const maxBefore = Math.max(...before.map((r) => Number(r.id)));

await pool.query('ALTER TABLE domains DROP COLUMN is_sandbox');
await pool.query('ALTER TABLE mails DROP COLUMN provider');
const upgrade = await migratePostgres(pool);

t.test('the upgrade applies 011 to the database 010 left', async (t) => {
  t.equal(upgrade.applied[0], '011_event_outbox.sql');
  t.equal(before.length, 5, 'control: two status events, an open, a click and an unsubscribe were there before');
});

t.test('every row is in event_outbox with its id, kind, stage and flag; mail_events is gone', async (t) => {
  t.same((await pool.query(`SELECT ${OUTBOX_COLUMNS} FROM event_outbox ORDER BY id`)).rows, before);
  t.equal((await pool.query(`SELECT to_regclass('mail_events') AS r`)).rows[0].r, null);
});

t.test('nothing is still named mail_events: constraints, indexes, sequence, functions', async (t) => {
  const names = await pool.query<{ what: string; name: string }>(
    `SELECT 'relation' AS what, relname AS name FROM pg_class WHERE relname LIKE 'mail\\_events%'
     UNION ALL SELECT 'constraint', conname FROM pg_constraint WHERE conname LIKE 'mail\\_events%'
     UNION ALL SELECT 'function', proname FROM pg_proc WHERE prosrc LIKE '%mail\\_events%'`,
  );
  t.same(names.rows, []);
  // Later migrations add indexes of their own (017: the webhook fan-out's), so the five by name.
  const renamed = ['event_outbox_pkey', 'event_outbox_new_idx', 'event_outbox_unshipped_idx', 'event_outbox_mail_idx', 'event_outbox_shipped_idx'];
  const indexes = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = 'event_outbox' AND indexname = ANY ($1)`, [renamed]);
  t.equal(indexes.rows[0]!.n, 5, 'the primary key and the four indexes of 005, renamed');
  t.equal((await pool.query(`SELECT pg_get_serial_sequence('event_outbox', 'id') AS s`)).rows[0].s, 'public.event_outbox_id_seq');
});

t.test('new events continue the ids, from the trigger and from the domain writers', async (t) => {
  const moved = (await send('later@example.org')).mails[0]!.mail_id;
  await withTenant(pool, a.tenant, (c) => recordComplaint(a.tenant, c, { mailId: clicked, feedbackType: 'abuse' }));
  const after = await pool.query<{ id: string; mail_id: string; kind: string }>(`SELECT id, mail_id, kind FROM event_outbox WHERE id > $1 ORDER BY id`, [maxBefore]);
  t.same(after.rows.map((r) => [r.mail_id, r.kind]), [[moved, 'status'], [clicked, 'complaint']]);
});

t.test('kinds: the database enumerates none, and keeps the status rule', async (t) => {
  const insert = (kind: string, status: number | null) =>
    pool.query(`INSERT INTO event_outbox (instance_id, mail_id, kind, status) VALUES ($1, $2, $3, $4)`, [a.tenant.instanceId, opened, kind, status]);
  for (const kind of OUTBOX_EVENT_KINDS) await insert(kind, kind === 'status' ? 3 : null);
  await t.resolves(insert('restriction.created', null), 'a kind the list does not have yet needs no DDL');
  await t.rejects(insert('status', null), { code: '23514' }, 'a status event without its status');
  await t.rejects(insert('open', 3), { code: '23514' }, 'a status on another kind');
});

t.test('the tenant role keeps its grants and its wall', async (t) => {
  const privileges = await pool.query(
    `SELECT has_table_privilege('cartero_tenant', 'event_outbox', 'SELECT') AS s, has_table_privilege('cartero_tenant', 'event_outbox', 'INSERT') AS i,
            has_table_privilege('cartero_tenant', 'event_outbox', 'UPDATE') AS u, has_table_privilege('cartero_tenant', 'event_outbox', 'DELETE') AS d`,
  );
  t.same(privileges.rows[0], { s: true, i: true, u: false, d: false });
  const own = await withTenant(pool, a.tenant, (c) => c.query('SELECT count(*)::int AS n FROM event_outbox'));
  t.ok(own.rows[0].n > 0, "a sees its own events");
  const other = await withTenant(pool, b.tenant, (c) => c.query('SELECT count(*)::int AS n FROM event_outbox'));
  t.equal(other.rows[0].n, 0, "b sees none of a's");
});

t.test("the event pump claims the migrated rows it had not counted yet", async (t) => {
  const fresh = await withTransaction(pool, (c) => claimNew(c, 100));
  const stillNew = before.filter((r) => r.stage === 0).map((r) => Number(r.id));
  t.same(fresh.map((e) => Number(e.id)).filter((id) => id <= maxBefore), stillNew);
});

t.test("the unsubscribe and complaint logs keep their rows and read the address from the mail", async (t) => {
  const toEmail = (await pool.query('SELECT to_email FROM mails WHERE mail_id = $1', [opened])).rows[0].to_email;
  const page = { page: 1, page_size: 10 };
  t.same((await listUnsubscribes(a.tenant, pool, page)).data.map((u) => [u.mail_id, u.recipient, u.method]), [[opened, toEmail, 'one_click']]);
  t.same((await listComplaints(a.tenant, pool, page)).data.map((k) => [k.mail_id, k.recipient, k.feedback_type]).filter(([m]) => m === opened), [[opened, toEmail, 'abuse']]);
  const copies = await pool.query(
    `SELECT table_name FROM information_schema.columns WHERE table_name IN ('mail_unsubscribes', 'mail_complaints') AND column_name = 'recipient'`,
  );
  t.same(copies.rows, [], 'no copy left');
});
