// Queue settings are read when testDatabases creates the queues (the release step): set first.
// Two retries per job, one second apart (doubling), found by pg-boss's maintenance every second.
process.env.SEND_RETRY_LIMIT = '2';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '1';

import t from 'tap';
import { requeueStrandedMails } from '../domain/mail/onhold.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { heldOff, holdByLiveWorker, mailApi, startSendStack, waitFor } from './helpers/send-stack.js';

/**
 * A deferred mail's last SMTP try is counted in tries, not in job runs (workers/jobs/send-mail/record.ts): a
 * job run spent held off a mail another live worker still has at SMTP (workers/machinery/send-lease.ts)
 * must not make a later 4xx a soft bounce early. With SEND_RETRY_LIMIT=2 a mailbox that answers
 * 452 every time gets exactly three SMTP tries before the mail is a soft bounce, even though its
 * first job spent a run held and runs out of runs after two tries (its mail then waits for the
 * stranded-mail sweep, called here at once instead of after 15 minutes).
 */
const stack = await startSendStack(t, { label: 'retrybudget', publicUrl: 'https://track.budget.test' });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'budget.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);

t.test('held job runs do not count as SMTP tries of a deferred mail', async (t) => {
  const r = await api.send({ from: 'news@budget.example', to: [{ email: 'softbounce-held@example.org' }], subject: 'Full', text: 'hello' });
  t.equal(r.status, 202);
  const id: string = r.body.mails[0].mail_id;
  const mail = async () =>
    (await dbs.pool.query<{ status: number; attempts: number; bounce_class: string | null }>('SELECT status, attempts, bounce_class FROM mails WHERE mail_id = $1', [id])).rows[0]!;
  const jobStates = async () =>
    (await dbs.pool.query<{ state: string }>(`SELECT state FROM pgboss.job WHERE name = 'mail.send' AND data->>'mail_id' = $1 ORDER BY created_on`, [id])).rows.map((j) => j.state);

  // Another worker, alive, has the mail at SMTP: the first run of the job is held.
  await holdByLiveWorker(dbs.pool, id);
  const worker = stack.spawnWorker();
  await worker.waitForStdout(heldOff(id), 20_000); // the first run held off the mail
  // That worker dies without an answer: its lease lapses, the next runs try SMTP (452 each time).
  await dbs.pool.query("UPDATE send_leases SET expires_at = now() - interval '1 second' WHERE worker_id = 'elsewhere'");
  await waitFor('the first job out of runs', async () => ((await jobStates()).at(-1) === 'failed' ? true : undefined), { ms: 30_000 });
  t.strictSame(await mail(), { status: 5, attempts: 2, bounce_class: null }, 'two SMTP tries: deferred, not yet a soft bounce');

  // The minute sweep gives it a new job (staleness 0 here): the third try is its last.
  t.equal(await requeueStrandedMails(dbs.pool, jobQueue(dbs.databaseUrl), 0), 1, 'requeued by the sweep');
  await waitFor('the mail a soft bounce', async () => ((await mail()).status === 6 ? true : undefined), { ms: 30_000 });
  t.strictSame(await mail(), { status: 6, attempts: 3, bounce_class: 'soft' }, 'a soft bounce after exactly SEND_RETRY_LIMIT + 1 SMTP tries');
  worker.signal('SIGTERM');
  await worker.waitExit(30_000);
});
