// Queue settings are read when testDatabases creates the queues (the release step): set first.
// A send job still active after 2 s is retried (pg-boss's maintenance runs every second), long
// before the slow relay below answers.
process.env.SEND_JOB_EXPIRE_SECONDS = '2';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '1';

import t, { type Test } from 'tap';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { heldOff, holdByLiveWorker, mailApi, messagesOf, startSendStack, waitFor } from './helpers/send-stack.js';
import type { Proc } from './helpers/spawn.js';

/**
 * A send job that outlives its expiry while its mail is still at SMTP (a relay that takes 20 s to
 * answer, the job expires after 2 s): pg-boss retries the job while the first run still waits.
 * The retry must not send the mail a second time (workers/machinery/send-lease.ts), whether it runs in the
 * same worker process or in another one; the first run's reply settles the mail, and every mail
 * is delivered exactly once, its job completed.
 */
// The relay's wait must outlast the retry by a margin on a loaded CI host: with 10 s, a retry seen
// only after the slow mails had their 250 failed once under the whole suite's load.
const SLOW_MS = 20_000;
const stack = await startSendStack(t, { label: 'sendexpiry', publicUrl: 'https://track.expiry.test', simulatorSlowMs: SLOW_MS });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'expiry.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);

const rows = async <T>(sql: string, params: unknown[]): Promise<T[]> => (await dbs.pool.query(sql, params)).rows as T[];
const statuses = (ids: string[]) => rows<{ status: number }>('SELECT status FROM mails WHERE mail_id = ANY ($1)', [ids]);
const jobs = (ids: string[]) =>
  rows<{ state: string; retry_count: number }>(
    `SELECT state, retry_count FROM pgboss.job WHERE name = 'mail.send' AND data->'mail_ids' ?| $1::text[]`,
    [ids],
  );

async function sendSlow(t: Test, tag: string): Promise<string[]> {
  const r = await api.send({
    from: 'news@expiry.example',
    to: [{ email: `slow-${tag}-1@example.org` }, { email: `slow-${tag}-2@example.org` }, { email: `fast-${tag}@example.org` }],
    subject: 'Slow relay',
    text: 'hello',
  });
  t.equal(r.status, 202);
  return r.body.mails.map((m: any) => m.mail_id as string);
}

/** Waits for the retries, the sends and the jobs to settle; then each mail must have one message. */
async function checkOnce(t: Test, ids: string[], workers: Proc[]): Promise<void> {
  const alive = () => {
    for (const w of workers) if (w.exit()) throw new Error(`a worker exited: ${w.stderr()}`);
  };
  // The mails reach SMTP first: on a loaded host the render threads (run at a lower priority than
  // the event loop) can take longer than the 2 s expiry, and a retry before the claim is not the
  // case under test.
  await waitFor('a slow mail at SMTP', async () => {
    alive();
    return (await statuses(ids)).some((m) => m.status === 2) ? true : undefined;
  }, { ms: 30_000 });
  await waitFor('a slow mail\'s job retried after its expiry', async () => {
    alive();
    return (await jobs(ids)).some((j) => j.retry_count > 0) ? true : undefined;
  }, { ms: 30_000 });
  t.ok((await statuses(ids)).some((m) => m.status === 2), 'a slow mail is still queued, waiting on the relay');
  await waitFor('every mail sent', async () => {
    alive();
    return (await statuses(ids)).every((m) => m.status === 3) ? true : undefined;
  }, { ms: 60_000 });
  // Past the retries' backoff: any second send would have reached the mailbox by now.
  await waitFor('every job settled', async () => ((await jobs(ids)).every((j) => ['completed', 'failed'].includes(j.state)) ? true : undefined), { ms: 60_000 });
  const settled = await jobs(ids);
  t.ok(settled.every((j) => j.state === 'completed'), 'every job completed (none ran out of runs)');
  t.ok(workers.some((w) => (w.stdout() + w.stderr()).includes('not sent again')), 'a retry was held off its mail (the worker says so)');
  for (const id of ids) t.equal(messagesOf(stack.mailboxDir, id).length, 1, `${id}: delivered exactly once`);
  const logs = await rows<{ n: number }>('SELECT count(*)::int AS n FROM mail_logs WHERE mail_id = ANY ($1) AND status = 3', [ids]);
  t.equal(logs[0]!.n, ids.length, 'one recorded 250 per mail');
}

async function stop(w: Proc): Promise<void> {
  w.signal('SIGTERM');
  await w.waitExit(30_000);
}

t.test('the retry runs in the worker whose run still has the mail at SMTP (pg-boss fetches again once the job expired)', async (t) => {
  const worker = stack.spawnWorker();
  const ids = await sendSlow(t, 'same');
  await checkOnce(t, ids, [worker]);
  await stop(worker);
});

t.test('a mail another live worker has at SMTP waits for it; once its lease lapses (it died), the mail is sent', async (t) => {
  // pg-boss gives up on a handler after the job's expiry and fetches again, so in the test above
  // the holder itself takes its retries. Here the holder is another process, by the database
  // alone: a queued mail claimed by worker "elsewhere", whose lease is live.
  const r = await api.send({ from: 'news@expiry.example', to: [{ email: 'held@example.org' }], subject: 'Held', text: 'hello' });
  t.equal(r.status, 202);
  const id: string = r.body.mails[0].mail_id;
  await holdByLiveWorker(dbs.pool, id);
  const worker = stack.spawnWorker();
  await worker.waitForStdout(heldOff(id), 20_000); // the worker leaves the held mail alone
  t.equal((await statuses([id]))[0]?.status, 2, 'still queued');
  t.equal(messagesOf(stack.mailboxDir, id).length, 0, 'not sent while its holder lives');

  // The holder dies: its lease is not refreshed and lapses. The next retry sends the mail.
  await dbs.pool.query("UPDATE send_leases SET expires_at = now() - interval '1 second' WHERE worker_id = 'elsewhere'");
  await waitFor('the mail sent once the lease lapsed', async () => ((await statuses([id]))[0]?.status === 3 ? true : undefined), { ms: 30_000 });
  await waitFor('its job settled', async () => ((await jobs([id])).every((j) => ['completed', 'failed'].includes(j.state)) ? true : undefined), { ms: 30_000 });
  // The acceptance's job, and the held run's follow-up (the mail looked at again 10 s later): all completed.
  const states = (await jobs([id])).map((j) => j.state);
  t.ok(states.length >= 2 && states.every((s) => s === 'completed'), `every job of the mail completed (${states.join(', ')})`);
  t.equal(messagesOf(stack.mailboxDir, id).length, 1, 'delivered exactly once');
  await stop(worker);
});
