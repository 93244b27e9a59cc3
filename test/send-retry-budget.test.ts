// Queue settings are read when testDatabases creates the queues (the release step): set first.
// Two retries, one second apart (doubling), expiries found by pg-boss's maintenance every second.
process.env.SEND_RETRY_LIMIT = '2';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '1';

import t from 'tap';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { heldOff, holdByLiveWorker, mailApi, startSendStack, waitFor } from './helpers/send-stack.js';

/**
 * A deferred mail's tries are its own (workers/jobs/send-mail/record.ts, issue 42): counted on its
 * row, not in job runs, and scheduled by its row's next_attempt_at with a job for then. A run
 * spent held off a mail another live worker still has at SMTP (workers/machinery/send-lease.ts)
 * costs it nothing. With SEND_RETRY_LIMIT=2 a mailbox that answers 452 every time gets exactly
 * three SMTP tries, each after the last one's backoff (1 s, then 2 s, times 1 to 2), before the
 * mail is a soft bounce, with no sweep to rescue it.
 */
const stack = await startSendStack(t, { label: 'retrybudget', publicUrl: 'https://track.budget.test' });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'budget.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);

t.test('held job runs do not count as SMTP tries of a deferred mail, and each retry waits its backoff', async (t) => {
  const r = await api.send({ from: 'news@budget.example', to: [{ email: 'softbounce-held@example.org' }], subject: 'Full', text: 'hello' });
  t.equal(r.status, 202);
  const id: string = r.body.mails[0].mail_id;
  const mail = async () =>
    (await dbs.pool.query<{ status: number; attempts: number; bounce_class: string | null; next_attempt_at: Date | null }>(
      'SELECT status, attempts, bounce_class, next_attempt_at FROM mails WHERE mail_id = $1', [id],
    )).rows[0]!;

  // Another worker, alive, has the mail at SMTP: the first run of the job is held.
  await holdByLiveWorker(dbs.pool, id);
  const worker = stack.spawnWorker();
  await worker.waitForStdout(heldOff(id), 20_000); // the first run held off the mail
  // That worker dies without an answer: its lease lapses, the next runs try SMTP (452 each time).
  await dbs.pool.query("UPDATE send_leases SET expires_at = now() - interval '1 second' WHERE worker_id = 'elsewhere'");
  await waitFor('the mail a soft bounce', async () => ((await mail()).status === 6 ? true : undefined), { ms: 30_000 });
  t.strictSame(await mail(), { status: 6, attempts: 3, bounce_class: 'soft', next_attempt_at: null }, 'a soft bounce after exactly SEND_RETRY_LIMIT + 1 SMTP tries');

  // Each try after a deferral came no sooner than its backoff: 1 s after the first try's batch, 2 s after the second's.
  const { rows: tries } = await dbs.pool.query<{ status: number; at: number }>(
    `SELECT status, extract(epoch FROM created_at)::float8 AS at FROM mail_logs WHERE mail_id = $1 AND status IN (2, 5) ORDER BY id`, [id],
  );
  t.same(tries.map((x) => x.status), [2, 5, 2, 5, 2], 'handed to SMTP three times, deferred twice in between');
  // The backoff counts from the batch's start, a little before the deferral was written.
  t.ok(tries[2]!.at - tries[0]!.at >= 1, `the second try at least 1 s after the first (${(tries[2]!.at - tries[0]!.at).toFixed(2)} s)`);
  t.ok(tries[4]!.at - tries[2]!.at >= 2, `the third at least 2 s after the second (${(tries[4]!.at - tries[2]!.at).toFixed(2)} s)`);
  // Every job that named the mail: the acceptance's, the held run's follow-up and one per deferral.
  const { rows: jobs } = await dbs.pool.query<{ state: string }>(
    `SELECT state FROM pgboss.job WHERE name = 'mail.send' AND data->'mail_ids' ? $1 ORDER BY created_on`, [id],
  );
  t.ok(jobs.length >= 4 && jobs.every((j) => j.state === 'completed'), `every job of the mail completed, none failed (${jobs.map((j) => j.state).join(', ')})`);
  worker.signal('SIGTERM');
  await worker.waitExit(30_000);
});
