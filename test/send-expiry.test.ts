// Queue settings are read when testDatabases creates the queues (the release step): set first.
// A send job still active after 2 s is retried (pg-boss's maintenance runs every second), long
// before the slow relay below answers.
process.env.SEND_JOB_EXPIRE_SECONDS = '2';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '1';

import t from 'tap';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, messagesOf, startSendStack, waitFor } from './helpers/send-stack.js';

/**
 * A send job that outlives its expiry while its mail is still at SMTP (a relay that takes 8 s to
 * answer, the job expires after 2 s): pg-boss retries the job while the first run still waits.
 * The retry must not send the mail a second time (workers/send-lease.ts); the first run's reply
 * settles the mail, and every mail is delivered exactly once.
 */
const SLOW_MS = 8_000;
const stack = await startSendStack(t, { label: 'sendexpiry', publicUrl: 'https://track.expiry.test', simulatorSlowMs: SLOW_MS });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'expiry.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);
const worker = stack.spawnWorker();

t.test('a job retried while its mail waits on a slow relay does not send it again', async (t) => {
  const r = await api.send({
    from: 'news@expiry.example',
    to: [{ email: 'slow-1@example.org' }, { email: 'slow-2@example.org' }, { email: 'fast@example.org' }],
    subject: 'Slow relay',
    text: 'hello',
  });
  t.equal(r.status, 202);
  const ids: string[] = r.body.mails.map((m: any) => m.mail_id);
  const status = async () =>
    (await dbs.pool.query<{ mail_id: string; status: number }>('SELECT mail_id, status FROM mails WHERE mail_id = ANY ($1) ORDER BY mail_id', [ids])).rows;

  // The jobs of the slow mails expire and are retried while their first run waits for the 250.
  const retried = await waitFor('a slow mail\'s job retried after its expiry', async () => {
    if (worker.exit()) throw new Error(`the worker exited: ${worker.stderr()}`);
    const { rows } = await dbs.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'mail.send' AND data->>'mail_id' = ANY ($1) AND retry_count > 0`,
      [ids],
    );
    return rows[0]!.n > 0 ? rows[0]!.n : undefined;
  }, 20_000);
  t.ok(retried >= 1, `${retried} job(s) retried while their mail was at SMTP`);
  const during = await status();
  t.ok(during.some((m) => m.status === 2), 'a slow mail is still queued, waiting on the relay');

  await waitFor('every mail sent', async () => ((await status()).every((m) => m.status === 3) ? true : undefined), 60_000);
  // Past the retries' backoff: any second send would have reached the mailbox by now.
  await waitFor('every job settled', async () => {
    const { rows } = await dbs.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'mail.send' AND data->>'mail_id' = ANY ($1) AND state NOT IN ('completed', 'failed')`,
      [ids],
    );
    return rows[0]!.n === 0 ? true : undefined;
  }, 60_000);
  for (const id of ids) t.equal(messagesOf(stack.mailboxDir, id).length, 1, `${id}: delivered exactly once`);
  const logs = await dbs.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM mail_logs WHERE mail_id = ANY ($1) AND status = 3`, [ids]);
  t.equal(logs.rows[0]!.n, ids.length, 'one recorded 250 per mail');
  const lease = await dbs.pool.query<{ mail_ids: string[] }>('SELECT mail_ids FROM send_leases');
  t.ok(lease.rows.length >= 1, "the worker's lease row");
  await waitFor('the lease lists none of them', async () => {
    const { rows } = await dbs.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM send_leases WHERE mail_ids && $1::text[]', [ids]);
    return rows[0]!.n === 0 ? true : undefined;
  }, 10_000);
});
