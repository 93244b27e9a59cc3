// Read when testDatabases creates the queues (release step): no retries, so the simulator's
// softbounce* recipient (452 on every try) is a soft bounce at its first try.
process.env.SEND_RETRY_LIMIT = '0';
process.env.SEND_RETRY_DELAY_SECONDS = '1';

import { readdirSync } from 'node:fs';
import { pino } from 'pino';
import t from 'tap';
import { acceptSend } from '../domain/mail/accept.js';
import { MailStatus } from '../domain/mail/status.js';
import { moveMail } from '../domain/mail/transitions.js';
import { lift } from '../domain/restrictions/restrictions.js';
import { evaluateSoftBounces } from '../domain/restrictions/soft-bounces.js';
import { withTenant, type Tenant } from '../domain/tenancy/context.js';
import { loadConfig } from '../config/config.js';
import { createBoss, jobQueue } from '../workers/machinery/queue.js';
import { startWorker } from '../runtime/worker.js';
import { SOFT_BOUNCES_QUEUE, SOFT_BOUNCES_SWEEP_QUEUE } from '../workers/jobs/soft-bounces.js';
import { testDatabases } from './helpers/databases.js';
import { startTestMailbox } from './helpers/mailbox.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { waitFor } from './helpers/send-stack.js';

/**
 * Restrictions from bounces, with the worker in-process on the real simulator: a synchronous
 * hard bounce restricts at once (and the next send is dropped); soft bounces are counted by the
 * threshold job (SOFT_BOUNCE_THRESHOLD 3 in SOFT_BOUNCE_WINDOW_DAYS 30, the defaults), which
 * the send worker enqueues after committing a soft bounce and the minute sweep enqueues for
 * anything left unevaluated.
 */

const dbs = await testDatabases(t, 'softbounces');
const { simulator, mailboxDir } = await startTestMailbox(t);
const a = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const b = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, b.tenant, { domain: 'other.example', senders: [{ email: 'news', name: 'Other' }] });
const queue = jobQueue(dbs.databaseUrl);

const logger = pino({ level: 'warn' }, pino.destination(2));
const worker = await startWorker(
  loadConfig({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, SMTP_URL: simulator.url, PUBLIC_URL: 'https://cartero.test', LOG_LEVEL: 'warn' }),
  logger,
);
t.teardown(() => worker.stop());
const boss = createBoss(dbs.databaseUrl, { supervise: false, schedule: false });
boss.on('error', () => {});
await boss.start();
t.teardown(() => boss.stop({ graceful: false, wait: true }));
// Without the minute sweep, only the send worker's enqueue after commit can evaluate the soft
// bounces below: the threshold tests then fail if that enqueue is missing. The sweep is run
// explicitly by its own test.
await boss.unschedule(SOFT_BOUNCES_SWEEP_QUEUE);

const senderOf = (tenant: Tenant) => (tenant === a.tenant ? 'news@send.example' : 'news@other.example');

/** One mail to `email`, accepted the way the API does it, and its final status. */
async function send(email: string, tenant: Tenant = a.tenant): Promise<{ id: string; status: number; bounceClass: string | null }> {
  const r = await acceptSend(tenant, dbs.pool, queue, { from: senderOf(tenant), to: [{ email }], subject: 's', text: 't' });
  const id = r.mails[0]!.mail_id;
  return waitFor(`mail ${id} final`, async () => {
    const row = (await dbs.pool.query<{ status: number; bounce_class: string | null }>('SELECT status, bounce_class FROM mails WHERE mail_id = $1', [id])).rows[0]!;
    return [3, 4, 6, 7].includes(row.status) ? { id, status: row.status, bounceClass: row.bounce_class } : undefined;
  });
}

/** Waits until the threshold job has looked at this mail's bounce. */
async function evaluated(mailId: string): Promise<void> {
  await waitFor(`bounce of ${mailId} evaluated`, async () => {
    const { rows } = await dbs.pool.query<{ evaluated: boolean }>('SELECT evaluated FROM mail_bounces WHERE mail_id = $1', [mailId]);
    return rows.length === 1 && rows[0]!.evaluated ? true : undefined;
  });
}

async function softBounce(email: string): Promise<string> {
  const m = await send(email);
  if (m.status !== 6 || m.bounceClass !== 'soft') throw new Error(`expected a soft bounce to ${email}, got ${m.status}/${m.bounceClass}`);
  await evaluated(m.id);
  return m.id;
}

interface RestrictionRow {
  instance_id: number;
  reason: string;
  lifted: boolean;
}
const restrictions = async (recipient: string): Promise<RestrictionRow[]> =>
  (
    await dbs.pool.query<RestrictionRow>(
      'SELECT instance_id, reason, deleted_at IS NOT NULL AS lifted FROM mail_restrictions WHERE recipient = $1 ORDER BY id',
      [recipient],
    )
  ).rows;
const inForce = (reason: string, tenant: Tenant = a.tenant) => ({ instance_id: tenant.instanceId, reason, lifted: false });
const logs = async (id: string) =>
  (await dbs.pool.query<{ status: number; reason: string | null }>('SELECT status, reason FROM mail_logs WHERE mail_id = $1 ORDER BY id', [id])).rows.map((r) => [r.status, r.reason]);
const stored = (id: string) => readdirSync(mailboxDir).filter((f) => f.endsWith('.eml') && f.includes(id));

t.test('settings: SOFT_BOUNCE_THRESHOLD and SOFT_BOUNCE_WINDOW_DAYS, defaults 3 and 30', async (t) => {
  t.same(loadConfig({}).softBounces, { threshold: 3, windowDays: 30 });
  t.same(loadConfig({ SOFT_BOUNCE_THRESHOLD: '5', SOFT_BOUNCE_WINDOW_DAYS: '7' }).softBounces, { threshold: 5, windowDays: 7 });
  t.throws(() => loadConfig({ SOFT_BOUNCE_THRESHOLD: '0', SOFT_BOUNCE_WINDOW_DAYS: 'x' }), {
    message: 'SOFT_BOUNCE_THRESHOLD must be a whole number of at least 1, got "0"\nSOFT_BOUNCE_WINDOW_DAYS must be a whole number of at least 1, got "x"',
  }, 'nonsense stops the process, every variable named');
});

t.test('a synchronous 5xx hard bounce restricts the address; the next send to it is dropped', async (t) => {
  const first = await send('bounce-hard@example.org');
  t.same([first.status, first.bounceClass], [6, 'hard']);
  t.same(await restrictions('bounce-hard@example.org'), [inForce('hard_bounce')]);
  const { rows } = await dbs.pool.query('SELECT class, source, smtp_enhanced FROM mail_bounces WHERE mail_id = $1', [first.id]);
  t.same(rows, [{ class: 'hard', source: 'smtp', smtp_enhanced: '5.1.1' }]);

  const next = await send('Bounce-Hard@example.org');
  t.equal(next.status, 4, 'dropped');
  t.same(await logs(next.id), [[1, 'accepted'], [4, 'restricted:hard_bounce']]);
  t.same(stored(next.id), [], 'never contacted');
});

t.test('soft bounces: two leave the address alone, the third restricts it once the job has run', async (t) => {
  const address = 'softbounce-a@example.org';
  await softBounce(address);
  t.same(await restrictions(address), [], 'one soft bounce');
  await softBounce(address);
  t.same(await restrictions(address), [], 'two soft bounces');
  await softBounce(address);
  t.same(await restrictions(address), [inForce('soft_bounce')], 'the third crosses the threshold');

  const next = await send(address);
  t.equal(next.status, 4);
  t.same(await logs(next.id), [[1, 'accepted'], [4, 'restricted:soft_bounce']]);
});

t.test('soft bounces older than the window do not count', async (t) => {
  const address = 'softbounce-window@example.org';
  const old = await softBounce(address);
  const recent = await softBounce(address);
  await dbs.pool.query(`UPDATE mail_bounces SET bounced_at = now() - interval '31 days' WHERE mail_id = $1`, [old]);
  await dbs.pool.query(`UPDATE mail_bounces SET bounced_at = now() - interval '29 days' WHERE mail_id = $1`, [recent]);
  await softBounce(address);
  t.same(await restrictions(address), [], 'three soft bounces, one of them 31 days old: two in the window');
  await softBounce(address);
  t.same(await restrictions(address), [inForce('soft_bounce')], '29 days old, and two new: three in the window');
});

t.test('after a lift, the bounces before it do not count', async (t) => {
  const address = 'softbounce-lift@example.org';
  for (let i = 0; i < 3; i++) await softBounce(address);
  t.same(await restrictions(address), [inForce('soft_bounce')]);
  const lifted = await withTenant(dbs.pool, a.tenant, (c) => lift(a.tenant, c, address));
  t.equal(lifted?.reason, 'soft_bounce');

  await softBounce(address);
  t.same(await restrictions(address), [{ ...inForce('soft_bounce'), lifted: true }], 'four soft bounces, but one since the lift');
  await softBounce(address);
  await softBounce(address);
  t.same(await restrictions(address), [{ ...inForce('soft_bounce'), lifted: true }, inForce('soft_bounce')], 'three since the lift: restricted again');
});

/** Soft bounces recorded the way a late DSN records them, with nobody enqueuing the job. */
async function quietSoftBounces(tenant: Tenant, email: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const m = await send(email, tenant);
    if (m.status !== 3) throw new Error(`expected ${email} sent, got ${m.status}`);
    const moved = await withTenant(dbs.pool, tenant, (c) =>
      moveMail(tenant, c, m.id, MailStatus.bounced, { from: [MailStatus.sent], bounceClass: 'soft', bounceSource: 'dsn' }, { reason: 'dsn', smtpEnhanced: '4.4.7' }),
    );
    if (!moved) throw new Error('not moved');
    ids.push(m.id);
  }
  return ids;
}

/** No threshold job waiting or running (one left over by an earlier test would evaluate the next one's rows). */
async function thresholdJobsIdle(): Promise<void> {
  await waitFor('threshold jobs to finish', async () => {
    const { rows } = await dbs.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state < 'completed'`, [SOFT_BOUNCES_QUEUE]);
    return rows[0]!.n === 0 ? true : undefined;
  });
}

t.test('evaluation counts per instance, and only once per bounce', async (t) => {
  await thresholdJobsIdle();
  const address = 'shared@example.org';
  await quietSoftBounces(a.tenant, address, 2);
  await quietSoftBounces(b.tenant, address, 1);
  const settings = { threshold: 2, windowDays: 30 };
  t.same(await evaluateSoftBounces(b.tenant, dbs.pool, settings), { evaluated: 1, restricted: [] }, "instance a's bounces do not count for b");
  t.same(await restrictions(address), []);
  t.same(await evaluateSoftBounces(a.tenant, dbs.pool, settings, 1), { evaluated: 2, restricted: [address] }, 'in batches of one');
  t.same(await restrictions(address), [inForce('soft_bounce')]);
  t.same(await evaluateSoftBounces(a.tenant, dbs.pool, settings), { evaluated: 0, restricted: [] }, 'nothing left to evaluate');
});

t.test('the minute sweep enqueues the job for every instance with unevaluated soft bounces', async (t) => {
  const address = 'sweep@example.org';
  await thresholdJobsIdle();
  const since = (await dbs.pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
  const ids = await quietSoftBounces(b.tenant, address, 3);
  // Not a pause: a threshold job for another instance, sent now, has completed. The worker has
  // taken the queue up to here, so a job enqueued for b by the bounces above would be listed
  // below (created after `since`, whatever its state) however slow the machine is.
  const marker = (await boss.send(SOFT_BOUNCES_QUEUE, { instance_id: a.tenant.instanceId }, { singletonKey: String(a.tenant.instanceId) }))!;
  await waitFor('the marker threshold job', async () => ((await boss.getJobById(SOFT_BOUNCES_QUEUE, marker))?.state === 'completed' ? true : undefined));
  const enqueued = await dbs.pool.query(
    `SELECT state FROM pgboss.job WHERE name = $1 AND data->>'instance_id' = $2 AND created_on >= $3
     UNION ALL SELECT state FROM pgboss.archive WHERE name = $1 AND data->>'instance_id' = $2 AND created_on >= $3`,
    [SOFT_BOUNCES_QUEUE, String(b.tenant.instanceId), since],
  );
  t.same(enqueued.rows, [], 'no threshold job was enqueued for b by the quiet bounces');
  const pending = await dbs.pool.query('SELECT count(*)::int AS n FROM mail_bounces WHERE mail_id = ANY ($1) AND NOT evaluated', [ids]);
  t.same(pending.rows, [{ n: 3 }], 'nothing evaluated them yet');
  t.same(await restrictions(address), []);

  await boss.send(SOFT_BOUNCES_SWEEP_QUEUE, {});
  await waitFor('the restriction', async () => ((await restrictions(address)).length ? true : undefined));
  t.same(await restrictions(address), [inForce('soft_bounce', b.tenant)]);
  const left = await dbs.pool.query('SELECT count(*)::int AS n FROM mail_bounces WHERE mail_id = ANY ($1) AND NOT evaluated', [ids]);
  t.same(left.rows, [{ n: 0 }]);
  const jobs = await dbs.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND singleton_key = $2 AND state = 'completed'`,
    [SOFT_BOUNCES_QUEUE, String(b.tenant.instanceId)],
  );
  t.ok(jobs.rows[0]!.n >= 1, 'the threshold job ran for the instance');
});
