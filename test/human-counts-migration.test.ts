// Upgrading a database that has counted opens and clicks: migration 029 gives each mail
// human_opens / human_clicks, 0 where it had none (exact), null where it had some (the events the
// pump judged have left the outbox; sql/migrations/029_human_counts.sql). The event pump's
// additions then keep a null null and count on from a 0. The database is built as release 028
// left it, then migrated; the other test files only ever see fresh databases.
import t from 'tap';
import { acceptSend } from '../domain/mail/accept.js';
import { getMail } from '../domain/mail/mails.js';
import { addCounts } from '../domain/outbox/pump.js';
import { loadConfig } from '../config/config.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { migrateQueue } from '../workers/machinery/queue-migration.js';
import { migratePostgres } from '../sql/migrate.js';
import { emptyTestDatabase } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';

const { databaseUrl, pool } = await emptyTestDatabase(t, 'humancounts');
await migratePostgres(pool, { through: '028' });
await migrateQueue(databaseUrl, loadConfig(process.env).send);
// Today's acceptance writes each mail's provider (032): lent to the old schema, taken back before the upgrade.
await pool.query(`ALTER TABLE mails ADD COLUMN provider text NOT NULL DEFAULT 'other'`);
const a = await makeTenant(pool);
await makeSenders(pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const send = (to: string[]) =>
  acceptSend(a.tenant, pool, jobQueue(databaseUrl), { from: 'news@send.example', to: to.map((email) => ({ email })), subject: 's', text: 't' });
const before = await send(['opened@example.org', 'untouched@example.org', 'both@example.org']);
const [opened, untouched, both] = before.mails.map((m) => m.mail_id) as [string, string, string];
// As 028's pump left them.
await pool.query(`UPDATE mails SET opens = 2 WHERE mail_id = $1`, [opened]);
await pool.query(`UPDATE mails SET opens = 1, clicks = 3 WHERE mail_id = $1`, [both]);

await pool.query('ALTER TABLE mails DROP COLUMN provider');
const upgrade = await migratePostgres(pool);
const counts = async (id: string) => {
  const m = await getMail(a.tenant, pool, id);
  return [m.opens, m.clicks, m.human_opens, m.human_clicks];
};

t.test('029: 0 where a mail had no open or click, null where it had some', async (t) => {
  t.equal(upgrade.applied[0], '029_human_counts.sql');
  t.same(await counts(opened), [2, 0, null, 0], 'opened before: its human opens are not known; no click, so 0 human clicks');
  t.same(await counts(untouched), [0, 0, 0, 0]);
  t.same(await counts(both), [1, 3, null, null]);
  const after = await send(['new@example.org']);
  t.same(await counts(after.mails[0]!.mail_id), [0, 0, 0, 0], 'a mail accepted after the upgrade starts at 0');
});

t.test("the pump's additions: a null stays null, a 0 counts on", async (t) => {
  const c = await pool.connect();
  try {
    await addCounts(
      c,
      new Map([
        [opened, { opens: 1, clicks: 1, humanOpens: 1, humanClicks: 1 }],
        [untouched, { opens: 2, clicks: 0, humanOpens: 1, humanClicks: 0 }],
      ]),
    );
  } finally {
    c.release();
  }
  t.same(await counts(opened), [3, 1, null, 1]);
  t.same(await counts(untouched), [2, 0, 1, 0]);
});
