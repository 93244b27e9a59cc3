// Upgrading a database that has restrictions: migration 024 copies, onto each restriction that
// names its bounce (bounce_id, since 018), that bounce's reason and class
// (sql/migrations/024_restriction_bounce_reason.sql). The database is built as release 023 left
// it, then migrated; the other test files only ever see fresh databases.
import t from 'tap';
import { acceptSend } from '../domain/mail/accept.js';
import { listRestrictions } from '../domain/restrictions/list.js';
import { loadConfig } from '../config/config.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { migrateQueue } from '../workers/machinery/queue-migration.js';
import { migratePostgres } from '../sql/migrate.js';
import { emptyTestDatabase } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';

const { databaseUrl, pool } = await emptyTestDatabase(t, 'restrictionbounce');
await migratePostgres(pool, { through: '023' });
await migrateQueue(databaseUrl, loadConfig(process.env).send);
const a = await makeTenant(pool);
// Today's domain and acceptance code read the sandbox mark of 027: lent to the old schema while
// the fixtures are made, taken back before the upgrade (which adds it for real).
await pool.query('ALTER TABLE domains ADD COLUMN is_sandbox boolean NOT NULL DEFAULT false');
// Today's acceptance writes each mail's provider (032): lent to the old schema, taken back before the upgrade.
await pool.query(`ALTER TABLE mails ADD COLUMN provider text NOT NULL DEFAULT 'other'`);
await makeSenders(pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const accepted = await acceptSend(a.tenant, pool, jobQueue(databaseUrl), {
  from: 'news@send.example',
  to: [{ email: 'gone@example.org' }],
  subject: 's',
  text: 't',
});
const mailId = accepted.mails[0]!.mail_id;
// As 023's move to bounced wrote them: the bounce, and the restriction naming it.
const { rows: [bounce] } = await pool.query(
  `INSERT INTO mail_bounces (instance_id, mail_id, recipient, class, source, smtp_enhanced, reason)
   VALUES ($1, $2, 'gone@example.org', 'hard', 'smtp', '5.1.1', 'userunknown') RETURNING id`,
  [a.tenant.instanceId, mailId],
);
await pool.query(`INSERT INTO mail_restrictions (instance_id, recipient, reason, bounce_id) VALUES ($1, 'gone@example.org', 'hard_bounce', $2)`, [
  a.tenant.instanceId,
  bounce.id,
]);
// Made otherwise: an unsubscribe, and a hard_bounce restriction older than 018 (no bounce named).
await pool.query(`INSERT INTO mail_restrictions (instance_id, recipient, reason) VALUES ($1, 'left@example.org', 'unsubscribe'), ($1, 'old@example.org', 'hard_bounce')`, [
  a.tenant.instanceId,
]);

await pool.query('ALTER TABLE domains DROP COLUMN is_sandbox');
await pool.query('ALTER TABLE mails DROP COLUMN provider');
const upgrade = await migratePostgres(pool);

t.test('024 copies the bounce of each restriction that names one; the others stay null', async (t) => {
  t.equal(upgrade.applied[0], '024_restriction_bounce_reason.sql');
  const page = await listRestrictions(a.tenant, pool, { page: 1, page_size: 20 });
  t.same(
    Object.fromEntries(page.data.map((r) => [r.recipient, [r.reason, r.bounce_reason, r.bounce_class]])),
    {
      'gone@example.org': ['hard_bounce', 'userunknown', 'hard'],
      'left@example.org': ['unsubscribe', null, null],
      'old@example.org': ['hard_bounce', null, null],
    },
  );
});
