import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import t from 'tap';
import { acceptSend } from '../domain/mail/accept.js';
import { releaseOnHold, requeueStrandedMails } from '../domain/mail/onhold.js';
import { purgeExpiredMails } from '../domain/mail/retention.js';
import { setInstanceLimits } from '../domain/tenancy/instances.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { projectRoot } from '../config/paths.js';
import { purgeShippedOutboxEvents, SHIPPED_EVENTS_KEEP_HOURS } from '../workers/jobs/release-onhold.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';

const run = promisify(execFile);
const dbs = await testDatabases(t, 'housekeeping');
const queue = jobQueue(dbs.databaseUrl);
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'hk.example', senders: [{ email: 'news', name: 'News' }] });

const sendTo = (emails: string[]) =>
  acceptSend(a.tenant, dbs.pool, queue, { from: 'news@hk.example', to: emails.map((email) => ({ email })), subject: 's', text: 't' });
const rows = async (sql: string, params: unknown[] = []) => (await dbs.pool.query(sql, params)).rows;
/** How many of these mails a send job names (a job names up to 100 mails). */
const jobsFor = async (mailIds: string[]) =>
  Number((await rows(
    "SELECT count(DISTINCT m) AS n FROM pgboss.job j, jsonb_array_elements_text(j.data->'mail_ids') m WHERE j.name = 'mail.send' AND m = ANY($1)",
    [mailIds],
  ))[0].n);

t.test('mails on hold are released oldest first, as far as the quota allows', async (t) => {
  const sent = await sendTo(['h1@example.com', 'h2@example.com', 'h3@example.com']);
  const ids = sent.mails.map((m) => m.mail_id);
  // As the worker leaves them when the quota is used up.
  await dbs.pool.query("UPDATE mails SET status = 7 WHERE mail_id = ANY($1)", [ids]);
  await dbs.pool.query("DELETE FROM pgboss.job WHERE data->'mail_ids' ?| $1::text[]", [ids]);
  await setInstanceLimits(dbs.pool, a.slug, { monthly_quota: 1 });
  await dbs.pool.query(
    `INSERT INTO quota_usage (instance_id, month, used) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1)`,
    [a.tenant.instanceId],
  );
  t.equal(await releaseOnHold(a.tenant, dbs.pool, queue), 0, 'quota used up: nothing released');
  t.equal(await jobsFor(ids), 0);

  await setInstanceLimits(dbs.pool, a.slug, { monthly_quota: 3 });
  t.equal(await releaseOnHold(a.tenant, dbs.pool, queue), 2, 'two units free: the two oldest');
  const statuses = await rows('SELECT mail_id, status FROM mails WHERE mail_id = ANY($1) ORDER BY id', [ids]);
  t.same(statuses.map((r) => r.status), [1, 1, 7]);
  t.equal(await jobsFor(ids), 2, 'each released mail has a send job');
  const log = await rows("SELECT reason FROM mail_logs WHERE mail_id = $1 ORDER BY id DESC LIMIT 1", [ids[0]]);
  t.equal(log[0].reason, 'released_from_hold');

  // The CLI raises the quota (none = unlimited) and releases at once.
  const cli = await run(process.execPath, [join(projectRoot, 'bin', 'cartero.js'), 'instance', 'set-limits', '--slug', a.slug, '--monthly-quota', 'none'], {
    env: { ...process.env, DATABASE_URL: dbs.databaseUrl },
  });
  const out = JSON.parse(cli.stdout);
  t.equal(out.monthly_quota, null);
  t.equal(out.released_from_hold, 1);
  t.equal(await jobsFor(ids), 3);
});

t.test('set-limits refuses nonsense', async (t) => {
  const bad = await run(process.execPath, [join(projectRoot, 'bin', 'cartero.js'), 'instance', 'set-limits', '--slug', a.slug, '--burst', '2.5'], {
    env: { ...process.env, DATABASE_URL: dbs.databaseUrl },
  }).catch((e) => e);
  t.equal(bad.code, 2);
  t.equal(bad.stdout, '');
  t.match(bad.stderr, /--burst must be a whole number or none/);
  const ok = await setInstanceLimits(dbs.pool, a.slug, { send_rate_per_second: 2.5, send_burst: 10 });
  t.same([ok.send_rate_per_second, ok.send_burst], [2.5, 10]);
  const unchanged = await setInstanceLimits(dbs.pool, a.slug, { monthly_quota: 5 });
  t.same([unchanged.send_rate_per_second, unchanged.send_burst, unchanged.monthly_quota], [2.5, 10, 5], 'absent flags leave limits as they were');
});

t.test('mails left without a send job are requeued, others are not', async (t) => {
  // Three messages: a job for each.
  const [stranded, withJob, fresh] = (await Promise.all(['s1@example.com', 's2@example.com', 's3@example.com'].map((to) => sendTo([to])))).map((s) => s.mails[0]!.mail_id) as [string, string, string];
  await dbs.pool.query("UPDATE mails SET status = 2, updated_at = now() - interval '20 minutes' WHERE mail_id = ANY($1)", [[stranded, withJob]]);
  await dbs.pool.query("UPDATE mails SET status = 2 WHERE mail_id = $1", [fresh]);
  // The stranded mail's job failed on its last try; the others still have live jobs.
  await dbs.pool.query("UPDATE pgboss.job SET state = 'failed' WHERE data->'mail_ids' ? $1", [stranded]);
  const statusEvents = () => rows("SELECT status FROM event_outbox WHERE mail_id = $1 AND kind = 'status'", [stranded]);
  const eventsBefore = (await statusEvents()).length;
  t.equal(await requeueStrandedMails(dbs.pool, queue), 1);
  t.same(
    (await rows("SELECT reason, moved FROM mail_logs WHERE mail_id = $1 ORDER BY id DESC LIMIT 1", [stranded]))[0],
    { reason: 'requeued_without_job', moved: false },
  );
  t.equal((await statusEvents()).length, eventsBefore, 'a note, not a move: no status event');
  const live = await rows(
    "SELECT data->'mail_ids' AS mail_ids FROM pgboss.job WHERE name = 'mail.send' AND state = 'created' AND data->'mail_ids' ? $1",
    [stranded],
  );
  t.same(live.map((j) => j.mail_ids), [[stranded]], 'a new job for the stranded mail');
  t.equal(await jobsFor([withJob]), 1, 'a mail with a live job gets no second one');
  t.equal(await requeueStrandedMails(dbs.pool, queue), 0, 'requeued once, not at every sweep');
});

t.test('retention purge removes mails past the window with their logs', async (t) => {
  const sent = await sendTo(['old@example.com', 'new@example.com']);
  const [oldId, newId] = sent.mails.map((m) => m.mail_id) as [string, string];
  await dbs.pool.query("UPDATE mails SET received_at = now() - interval '3 months 1 day' WHERE mail_id = $1", [oldId]);
  const purged = await purgeExpiredMails(dbs.pool);
  t.ok(purged.mails >= 1);
  t.same(await rows('SELECT mail_id FROM mails WHERE mail_id = ANY($1)', [[oldId, newId]]), [{ mail_id: newId }]);
  t.same(await rows('SELECT 1 FROM mail_logs WHERE mail_id = $1', [oldId]), [], 'its logs went with it');
  t.equal(await rows('SELECT 1 FROM mail_logs WHERE mail_id = $1', [newId]).then((r) => r.length), 1);
});

t.test('the outbox keeps events until ClickHouse has had them for a day and the webhook stage has taken them, then lets them go', async (t) => {
  const old = `now() - make_interval(hours => ${SHIPPED_EVENTS_KEEP_HOURS + 1})`;
  const event = (label: string, stage: number, at: string, webhooksDone = true) =>
    dbs.pool.query(
      `INSERT INTO event_outbox (instance_id, mail_id, kind, url, occurred_at, stage, webhooks_done) VALUES ($1, 'PURGE', 'open', $2, ${at}, $3, $4)`,
      [a.tenant.instanceId, label, stage, webhooksDone],
    );
  for (let i = 0; i < 3; i++) await event(`shipped-old-${i}`, 2, old);
  await event('shipped-recent', 2, 'now()');
  await event('counted-old', 1, old); // counted, not yet in ClickHouse
  await event('new-old', 0, old); // not even counted yet
  await event('shipped-old-no-webhooks', 2, old, false); // in ClickHouse, not yet fanned out to webhooks
  t.equal(await purgeShippedOutboxEvents(dbs.pool), 3, 'the three shipped a day ago');
  const left = await rows("SELECT url FROM event_outbox WHERE mail_id = 'PURGE' ORDER BY url");
  t.same(left.map((r) => r.url), ['counted-old', 'new-old', 'shipped-old-no-webhooks', 'shipped-recent'], 'unshipped events, and events the webhook stage has not taken, stay whatever their age');
  t.equal(await purgeShippedOutboxEvents(dbs.pool), 0, 'nothing more to remove');
});
