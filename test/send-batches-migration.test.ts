// Fast retries and expiries for this file's queue: read when testDatabases creates the queues (release step).
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.SEND_RETRY_LIMIT = '2';
process.env.QUEUE_MAINTENANCE_SECONDS = '1';

// Upgrading a database whose send queue holds the one-mail jobs of the code before issue 42
// ({instance_id, mail_id}): migration 035 (sql/migrations/035_send_batches.sql) turns the queued
// and deferred ones into batch jobs and leaves the active ones, and the new worker then sends
// every mail exactly once: a rolling upgrade with mails in flight loses none and sends none twice.
// The database is built as release 034 left it (the file's database without 035's column and
// version row), holding mails in every state the old queue knew.
import { readdirSync } from 'node:fs';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../config/config.js';
import { SEND_MAIL_QUEUE, type JobQueue, type SendMailJob } from '../domain/job-queue.js';
import { acceptSend } from '../domain/mail/accept.js';
import { startWorker } from '../runtime/worker.js';
import { migratePostgres } from '../sql/migrate.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { startTestMailbox } from './helpers/mailbox.js';
import { waitFor } from './helpers/send-stack.js';

const dbs = await testDatabases(t, 'sendbatchesmigration');
const { pool } = dbs;
const { simulator, mailboxDir } = await startTestMailbox(t);

// As release 034 left the schema.
await pool.query("DELETE FROM schema_migrations WHERE version = '035'");
await pool.query('ALTER TABLE mails DROP COLUMN next_attempt_at');

// Acceptance as the old code enqueued: one job per mail.
const batches = jobQueue(dbs.databaseUrl);
const oldQueue: JobQueue = {
  insert: (c, jobs) =>
    batches.insert(
      c,
      jobs.flatMap((j) =>
        j.name === SEND_MAIL_QUEUE ? (j.data as SendMailJob).mail_ids.map((mail_id) => ({ name: SEND_MAIL_QUEUE, data: { instance_id: (j.data as SendMailJob).instance_id, mail_id } })) : [j],
      ),
    ),
};
const a = await makeTenant(pool);
await makeSenders(pool, a.tenant, { domain: 'upgrade.example', senders: [{ email: 'news', name: 'News' }] });
const send = async (to: string[]) =>
  (await acceptSend(a.tenant, pool, oldQueue, { from: 'news@upgrade.example', to: to.map((email) => ({ email })), subject: 'Upgrade', text: 'hello' })).mails.map(
    (m) => m.mail_id,
  );
const oldJob = async (mailId: string) => (await pool.query<{ id: string }>("SELECT id FROM pgboss.job WHERE name = 'mail.send' AND data->>'mail_id' = $1", [mailId])).rows[0]!.id;

// Queued, not yet fetched: 120 mails of one message (two batch jobs after the upgrade) and a second message.
const queued = await send(Array.from({ length: 120 }, (_, i) => `queued${i}@example.org`));
const queuedAlone = await send(['alone@example.org']);
// Deferred once, its retry waiting 4 s more in pg-boss's backoff.
const [deferred] = (await send(['later@example.org'])) as [string];
await pool.query("UPDATE mails SET status = 5, attempts = 1 WHERE mail_id = $1", [deferred]);
await pool.query(
  "UPDATE pgboss.job SET state = 'retry', retry_count = 1, start_after = date_trunc('second', now()) + interval '4 seconds' WHERE id = $1",
  [await oldJob(deferred)],
);
const retryAt = (await pool.query<{ at: Date }>('SELECT start_after AS at FROM pgboss.job WHERE id = $1', [await oldJob(deferred)])).rows[0]!.at;
// In flight in an old worker that dies: handed to SMTP, no reply recorded, its job active (expires in 2 s).
const [inFlight] = (await send(['inflight@example.org'])) as [string];
await pool.query("UPDATE mails SET status = 2, attempts = 0, held_by = 'old-worker', held_since = now(), queued_at = now() WHERE mail_id = $1", [inFlight]);
await pool.query("UPDATE pgboss.job SET state = 'active', started_on = now(), expire_in = interval '2 seconds' WHERE id = $1", [await oldJob(inFlight)]);
// Sent by an old worker whose job was not completed yet (killed right after recording the 250).
const [sentOld] = (await send(['sentold@example.org'])) as [string];
await pool.query("UPDATE mails SET status = 3, attempts = 1, sent_at = now() WHERE mail_id = $1", [sentOld]);
await pool.query("UPDATE pgboss.job SET state = 'active', started_on = now(), expire_in = interval '2 seconds' WHERE id = $1", [await oldJob(sentOld)]);

const upgrade = await migratePostgres(pool);

const jobs = async () =>
  (
    await pool.query<{ state: string; data: Record<string, unknown>; start_after: Date }>(
      "SELECT state::text, data, start_after FROM pgboss.job WHERE name = 'mail.send' ORDER BY start_after, data->>'mail_id', data->'mail_ids'->>0",
    )
  ).rows;

t.test('035 moves the queued and deferred one-mail jobs into batch jobs, and leaves the active ones', async (t) => {
  t.same(upgrade.applied, ['035_send_batches.sql']);
  const after = await jobs();
  const batchJobs = after.filter((j) => 'mail_ids' in j.data);
  t.same(
    after.filter((j) => 'mail_id' in j.data).map((j) => [j.data.mail_id, j.state]).sort(),
    [[inFlight, 'active'], [sentOld, 'active']].sort(),
    'only the active one-mail jobs are left as they were',
  );
  t.ok(batchJobs.every((j) => j.state === 'created' && j.data.instance_id === a.tenant.instanceId), 'the new jobs wait to start, for the mails\' instance');
  const named = batchJobs.flatMap((j) => j.data.mail_ids as string[]);
  t.same([...named].sort(), [...queued, ...queuedAlone, deferred].sort(), 'each queued or deferred mail named once');
  t.ok(batchJobs.every((j) => (j.data.mail_ids as string[]).length <= 100), 'at most 100 mails a job');
  t.equal(batchJobs.length, 3, 'the 121 mails waiting to start in two jobs, the deferred one in its own');
  const deferredJob = batchJobs.find((j) => (j.data.mail_ids as string[]).includes(deferred))!;
  t.same(deferredJob.data.mail_ids, [deferred]);
  t.equal(deferredJob.start_after.getTime(), retryAt.getTime(), 'the deferred mail keeps its retry time');
  const { rows } = await pool.query<{ mail_id: string; next_attempt_at: Date | null }>(
    'SELECT mail_id, next_attempt_at FROM mails WHERE next_attempt_at IS NOT NULL',
  );
  t.same(rows.map((r) => [r.mail_id, r.next_attempt_at!.getTime()]), [[deferred, retryAt.getTime()]], "the deferred mail's next try is on its row");
});

t.test('the new worker sends every mail once: batches, the deferred one at its time, the dead worker\'s in-flight one after its job expires', async (t) => {
  const config = loadConfig({ DATABASE_URL: dbs.databaseUrl, SMTP_URL: simulator.url, PUBLIC_URL: 'https://cartero.test', LOG_LEVEL: 'warn', CLICKHOUSE_URL: dbs.clickhouseUrl, QUEUE_MAINTENANCE_SECONDS: '1' });
  const worker = await startWorker(config, pino({ level: 'warn' }, pino.destination(2)));
  t.teardown(() => worker.stop());
  const all = [...queued, ...queuedAlone, deferred, inFlight, sentOld];
  await waitFor('every mail sent', async () => {
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM mails WHERE mail_id = ANY ($1) AND status = 3', [all]);
    return rows[0]!.n === all.length ? true : undefined;
  }, { ms: 60_000 });
  const files = readdirSync(mailboxDir).filter((f) => f.endsWith('.eml'));
  const copies = (id: string) => files.filter((f) => f.includes(id)).length;
  t.same(all.filter((id) => copies(id) !== (id === sentOld ? 0 : 1)), [], 'each mail delivered exactly once (the one the old worker sent, not again)');
  const { rows: handed } = await pool.query<{ created_at: Date }>('SELECT created_at FROM mail_logs WHERE mail_id = $1 AND status = 2', [deferred]);
  t.equal(handed.length, 1, 'the deferred mail handed to SMTP once');
  t.ok(handed[0]!.created_at.getTime() >= retryAt.getTime(), 'not before its retry time');
  await waitFor('no send job left to run', async () => {
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'mail.send' AND state IN ('created', 'retry', 'active')");
    return rows[0]!.n === 0 ? true : undefined;
  }, { ms: 30_000 });
  const { rows: failed } = await pool.query("SELECT data FROM pgboss.job WHERE name = 'mail.send' AND state = 'failed'");
  t.same(failed, [], 'no job failed');
});
