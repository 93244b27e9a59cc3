// Queue settings are read when testDatabases creates the queues (the release step): set first.
// Retries 1 s apart, doubling (pg-boss's backoff: the k-th retry waits 2^(k-1) to 2^k s), up to 8:
// a refusal of a few seconds costs a mail two or three tries, far from the soft bounce.
process.env.SEND_RETRY_LIMIT = '8';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '2';

import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SMTPServer } from 'smtp-server';
import { startMailboxSimulator, type MailboxSimulator } from '../smtp/simulator.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { type MailApi, mailApi, readMailbox, settledSendJobs, startSendStack, waitFor } from './helpers/send-stack.js';
import type { Proc } from './helpers/spawn.js';

/**
 * Fault suite, the receiving MTA refuses. Worker dynos as their own processes, their SMTP_URL
 * pointed at a faulty server on a port; once the mails have been deferred there, the faulty
 * server is stopped and the real mailbox simulator starts on the same port (the worker's
 * configuration does not change, as when a relay recovers). Two faults:
 *
 *  (a) a real SMTP server (smtp-server) that answers every connection `421 4.7.0` (busy, try
 *      later: what a relay says when it sheds load or greylists);
 *  (b) a mute server: it accepts the TCP connection and never says a word (no greeting). Only
 *      the client's greeting timeout (SMTP_GREETING_TIMEOUT_MS) ends each try.
 *
 * Each mail must be deferred (status 5, the reply in its log), retried with the queue's backoff,
 * then sent exactly once (one message in the mailbox), with nothing left behind: no mail queued
 * or claimed by a worker, no send job left active, waiting or failed.
 */
const N = 20;
const stack = await startSendStack(t, { label: 'faultsmtp', publicUrl: 'https://track.faultsmtp.test' });
const { dbs } = stack;

const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await dbs.pool.query(sql, params)).rows[0].n);

async function tenant(): Promise<{ api: MailApi; from: string }> {
  const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
  const domain = `${a.slug}.example`;
  await makeSenders(dbs.pool, a.tenant, { domain, senders: [{ email: 'news', name: 'News' }] });
  return { api: mailApi(stack.url, a.headers), from: `news@${domain}` };
}

async function sendMails(a: { api: MailApi; from: string }, tag: string): Promise<string[]> {
  const r = await a.api.send({
    from: a.from,
    to: Array.from({ length: N }, (_, i) => ({ email: `${tag}${i}@example.org` })),
    subject: `Fault ${tag}`,
    text: 'A relay that refuses, then accepts.',
  });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.mails.map((m: any) => m.mail_id as string);
}

/** The real mailbox simulator on `port` (where the faulty server was), stopped at teardown. */
async function simulatorOn(t: Test, port: number): Promise<{ simulator: MailboxSimulator; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'cartero-faultsmtp-'));
  const simulator = await startMailboxSimulator({ dir, port });
  t.teardown(async () => {
    await simulator.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { simulator, dir };
}

/** Mails with at least `tries` deferred tries whose reply matches `reply` (a SQL LIKE pattern). */
const deferredAtLeast = (ids: string[], tries: number, reply: string) =>
  count(
    `SELECT count(*) AS n FROM (SELECT mail_id FROM mail_logs WHERE mail_id = ANY ($1) AND status = 5 AND smtp_reply LIKE $3
        GROUP BY mail_id HAVING count(*) >= $2) x`,
    [ids, tries, reply],
  );

/**
 * A worker for one scenario, pointed at its faulty server, stopped when the scenario ends: every
 * worker takes every send job, and one left pointing at a server that is gone would try the next
 * scenario's mails there.
 */
function spawnWorker(t: Test, env: Record<string, string>): Proc {
  const worker = stack.spawnWorker(env);
  t.teardown(async () => {
    worker.signal('SIGTERM');
    if (!(await worker.waitExit(20_000))) worker.signal('SIGKILL');
  });
  return worker;
}

/** Waits until every mail is sent, failing early if the worker died. */
async function allSent(ids: string[], worker: Proc): Promise<void> {
  await waitFor(
    'every mail sent once the relay accepts',
    async () => {
      if (worker.exit()) throw new Error(`the worker exited: ${JSON.stringify(worker.exit())}\n${worker.stderr().slice(-3000)}`);
      return (await count('SELECT count(*) AS n FROM mails WHERE mail_id = ANY ($1) AND status = 3', [ids])) === ids.length ? true : undefined;
    },
    { ms: 90_000, every: 200 },
  );
}

/**
 * What must hold once the relay has recovered: each mail sent, one message each, its log a run of
 * deferrals (the expected reply) then one hand-off that was sent; the tries spaced by the
 * backoff; nothing claimed, no job left.
 */
async function recovered(t: Test, ids: string[], dir: string, reply: RegExp, minDeferrals: number, minTryMs = 0): Promise<void> {
  const { rows } = await dbs.pool.query<{ status: number; held_by: string | null }>('SELECT status, held_by FROM mails WHERE mail_id = ANY ($1)', [ids]);
  t.same(
    rows.filter((r) => r.status !== 3 || r.held_by !== null),
    [],
    'every mail sent, none left queued, deferred or claimed by a worker',
  );
  const copies = new Map<string, number>();
  for (const m of readMailbox(dir)) if (m.mailId) copies.set(m.mailId, (copies.get(m.mailId) ?? 0) + 1);
  t.same(
    ids.filter((id) => copies.get(id) !== 1),
    [],
    'sent once: exactly one message in the mailbox per mail',
  );
  t.equal(readMailbox(dir).length, ids.length, 'and nothing else');

  const { rows: logs } = await dbs.pool.query<{ mail_id: string; status: number; smtp_code: number | null; smtp_reply: string | null; attempt: number | null; at: Date }>(
    'SELECT mail_id, status, smtp_code, smtp_reply, attempt, created_at AS at FROM mail_logs WHERE mail_id = ANY ($1) ORDER BY id',
    [ids],
  );
  const byMail = new Map<string, typeof logs>();
  for (const l of logs) byMail.set(l.mail_id, [...(byMail.get(l.mail_id) ?? []), l]);
  const badShape: string[] = [];
  const badReply: string[] = [];
  const badAttempts: string[] = [];
  const tooSoon: string[] = [];
  const cutShort: string[] = [];
  let deferrals = 0;
  for (const [mailId, rs] of byMail) {
    const shape = rs.map((r) => r.status).join(',');
    // received, then (queued, deferred) per refused try, then queued, sent.
    if (!/^1,(2,5,)+2,3$/.test(shape) || (shape.match(/5/g) ?? []).length < minDeferrals) badShape.push(`${mailId}: ${shape}`);
    const deferred = rs.filter((r) => r.status === 5);
    deferrals += deferred.length;
    if (deferred.some((r) => !reply.test(r.smtp_reply ?? ''))) badReply.push(`${mailId}: ${deferred.map((r) => r.smtp_reply).join(' | ')}`);
    const handed = rs.filter((r) => r.status === 2);
    if (handed.map((r) => r.attempt).join(',') !== handed.map((_, i) => i + 1).join(',')) badAttempts.push(`${mailId}: ${handed.map((r) => r.attempt).join(',')}`);
    // pg-boss's backoff: the k-th retry comes at least 2^(k-1) x SEND_RETRY_DELAY_SECONDS (1 s)
    // after the failure before it (less 100 ms of clock slack between the worker's statements).
    // A refused try took at least minTryMs, from its hand-off to its deferral (the timeout waited).
    for (let k = 0; k < deferred.length; k++) {
      const took = deferred[k]!.at.getTime() - handed[k]!.at.getTime();
      if (took < minTryMs - 100) cutShort.push(`${mailId}: try ${k + 1} deferred after ${took} ms`);
    }
    for (let k = 1; k < handed.length; k++) {
      const failedAt = deferred[k - 1]!.at.getTime();
      if (handed[k]!.at.getTime() - failedAt < 2 ** (k - 1) * 1000 - 100) tooSoon.push(`${mailId}: retry ${k} after ${handed[k]!.at.getTime() - failedAt} ms`);
    }
  }
  t.same(badShape, [], `every mail logged received, ${minDeferrals}+ deferred tries, then sent`);
  t.same(badReply, [], `every deferral records the refusal (${reply})`);
  t.same(badAttempts, [], 'the tries are numbered 1, 2, 3... in the log');
  t.same(tooSoon, [], 'each retry waited the backoff: 1 s, then 2 s, then 4 s... at least');
  if (minTryMs) t.same(cutShort, [], `each refused try lasted its timeout (${minTryMs} ms) at least`);
  t.comment(`${deferrals} deferred tries for ${ids.length} mails before the relay recovered`);

  t.same(await settledSendJobs(dbs.pool, ids), { states: ['completed'], mails: ids.length }, 'every mail had a job; every job completed (never failed or left active)');
}

t.test('a relay answering 421 for a while, then accepting: deferred, retried with backoff, sent once; nothing stuck', async (t) => {
  let refused = 0;
  const refusing = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onConnect(_session, done) {
      refused++;
      done(Object.assign(new Error('4.7.0 Service busy, try again later'), { responseCode: 421 }));
    },
  });
  refusing.on('error', () => {});
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  const port = (refusing.server.address() as { port: number }).port;
  t.teardown(() => new Promise((r) => refusing.close(() => r(undefined))));

  const a = await tenant();
  const worker = spawnWorker(t, { SMTP_URL: `smtp://127.0.0.1:${port}` });
  const ids = await sendMails(a, 'refused');
  // Refused long enough that each mail was retried at least once while refused.
  await waitFor('every mail deferred twice by the 421', async () => ((await deferredAtLeast(ids, 2, '421%')) === N ? true : undefined), { ms: 60_000, every: 200 });
  t.ok(refused >= 2 * N, `the relay refused ${refused} connections`);
  t.equal(await count('SELECT count(*) AS n FROM mails WHERE mail_id = ANY ($1) AND status = 3', [ids]), 0, 'nothing sent while refused');

  await new Promise((r) => refusing.close(() => r(undefined)));
  const { dir } = await simulatorOn(t, port);
  await allSent(ids, worker);
  await recovered(t, ids, dir, /^421 4\.7\.0 Service busy/, 2);
});

t.test('a mute relay (connection accepted, no greeting): each try ends at the greeting timeout and is deferred; sent once it answers', async (t) => {
  const sockets = new Set<Socket>();
  let connections = 0;
  const mute: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
  const port = (mute.address() as { port: number }).port;
  const stopMute = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => mute.close(() => r(undefined)));
  };
  t.teardown(() => (mute.listening ? stopMute() : undefined));

  const GREETING_TIMEOUT_MS = 1000;
  const a = await tenant();
  // The greeting timeout is what bounds a try against a mute server (15 s by default; short here).
  const worker = spawnWorker(t, { SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_GREETING_TIMEOUT_MS: String(GREETING_TIMEOUT_MS) });
  const ids = await sendMails(a, 'mute');
  await waitFor('every mail deferred by the greeting timeout', async () => ((await deferredAtLeast(ids, 1, '%Greeting never received%')) === N ? true : undefined), { ms: 60_000, every: 200 });
  // The mute server holds no send job: none is active for long (each try ends at its timeout).
  t.equal(
    await count(`SELECT count(*) AS n FROM pgboss.job WHERE name = 'mail.send' AND data->'mail_ids' ?| $1::text[] AND state = 'failed'`, [ids]),
    0,
    'no job given up while the relay is mute',
  );
  t.ok(connections >= N, `the mute server took ${connections} connections and answered none`);

  await stopMute();
  const { dir } = await simulatorOn(t, port);
  await allSent(ids, worker);
  await recovered(t, ids, dir, /^ETIMEDOUT: Greeting never received$/, 1, GREETING_TIMEOUT_MS);
});
