// Queue settings are read when testDatabases creates the queues (the release step): set first.
// A job left active by a killed worker is retried after 5 s (+ the 1 s retry delay), found by
// pg-boss's maintenance every 2 s.
process.env.SEND_JOB_EXPIRE_SECONDS = '5';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '2';

import t from 'tap';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { logShapes, mailApi, mailboxCopies, readMailbox, settledSendJobs, sleep, startSendStack, waitFor } from './helpers/send-stack.js';

/**
 * At-least-once under a crash: 1,000 mails accepted over HTTP, a worker process SIGKILLed in the
 * middle of sending them, a new worker started. Every mail must reach sent with at least one
 * message in the mailbox; the duplicates a kill causes (mails whose 250 arrived but was not yet
 * recorded) are measured and bounded by what one process can have in flight.
 */
const BATCH_SIZE = 50;
const CONCURRENCY = 2;
const IN_FLIGHT = BATCH_SIZE * CONCURRENCY;
const SENDS = 10;
const PER_SEND = 100;
const TOTAL = SENDS * PER_SEND;
/** Killed once at least this many are sent (and before all are). */
const KILL_AFTER = 150;

const stack = await startSendStack(t, { label: 'sendkill', publicUrl: 'https://track.kill.test' });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'kill.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);
const workerEnv = { SEND_BATCH_SIZE: String(BATCH_SIZE), SEND_CONCURRENCY: String(CONCURRENCY) };

const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await dbs.pool.query(sql, params)).rows[0].n);
const byStatus = async (ids: string[]): Promise<Record<string, number>> => {
  const { rows } = await dbs.pool.query<{ status: number; n: number }>(
    'SELECT status, count(*)::int AS n FROM mails WHERE mail_id = ANY ($1) GROUP BY status ORDER BY status',
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [String(r.status), r.n]));
};

t.test('a worker killed during a batch of 1,000 mails loses none; duplicates are counted', async (t) => {
  // ---- accept 1,000 mails over HTTP, no worker running yet ------------------------------------
  const acceptStart = Date.now();
  const ids: string[] = [];
  for (let s = 0; s < SENDS; s++) {
    const r = await api.send({
      from: 'news@kill.example',
      to: Array.from({ length: PER_SEND }, (_, i) => ({ email: `r${s}-${i}@example.org`, variables: { n: s * PER_SEND + i } })),
      subject: 'Kill test {{n}}',
      html: '<p>Mail number {{n}} <a href="https://shop.example/">shop</a></p>',
    });
    if (!t.equal(r.status, 202, `send ${s} accepted`)) return t.comment(JSON.stringify(r.body));
    ids.push(...r.body.mails.map((m: any) => m.mail_id as string));
  }
  t.equal(new Set(ids).size, TOTAL, '1,000 distinct mail ids');
  t.comment(`accepted ${TOTAL} mails in ${Date.now() - acceptStart} ms`);
  const sentCount = () => count('SELECT count(*) AS n FROM mails WHERE mail_id = ANY ($1) AND status = 3', [ids]);

  // ---- first worker, killed mid-batch ---------------------------------------------------------
  const firstStart = Date.now();
  const first = stack.spawnWorker(workerEnv);
  const sentAtKill = await waitFor(
    `${KILL_AFTER} mails sent by the first worker`,
    async () => {
      if (first.exit()) throw new Error(`the first worker exited on its own: ${JSON.stringify(first.exit())}\n${first.stderr()}`);
      const n = await sentCount();
      return n >= KILL_AFTER ? n : undefined;
    },
    { ms: 60_000, every: 20 },
  );
  first.signal('SIGKILL');
  const exit = await first.waitExit(10_000);
  t.same(exit, { code: null, signal: 'SIGKILL' }, 'the first worker died of SIGKILL');
  // Sessions the kill cut are finished by the simulator (a DATA already ended is stored).
  await sleep(500);
  const atKill = await byStatus(ids);
  const final = (atKill['3'] ?? 0) + (atKill['4'] ?? 0) + (atKill['6'] ?? 0);
  t.comment(`killed after ${Date.now() - firstStart} ms with ${sentAtKill} seen sent; statuses at kill ${JSON.stringify(atKill)}`);
  t.ok(final > 0 && final < TOTAL, `some but not all mails final when killed (${final}/${TOTAL})`);
  t.equal(final, atKill['3'] ?? 0, 'the only final status so far is sent');
  const queuedAtKill = new Set(
    (await dbs.pool.query<{ mail_id: string }>('SELECT mail_id FROM mails WHERE mail_id = ANY ($1) AND status = 2', [ids])).rows.map((r) => r.mail_id),
  );
  t.ok(queuedAtKill.size <= IN_FLIGHT, `at most ${IN_FLIGHT} mails caught in flight (queued) by the kill: ${queuedAtKill.size}`);
  const storedAtKill = new Set(readMailbox(stack.mailboxDir).map((m) => m.mailId));
  const deliveredUnrecorded = [...queuedAtKill].filter((id) => storedAtKill.has(id));
  t.comment(`at kill: ${queuedAtKill.size} queued, of which ${deliveredUnrecorded.length} already stored by the simulator (250 not recorded)`);

  // ---- a new worker finishes the work ---------------------------------------------------------
  const secondStart = Date.now();
  const second = stack.spawnWorker(workerEnv);
  try {
    await waitFor(
      'every mail sent after the restart',
      async () => {
        if (second.exit()) throw new Error(`the second worker exited: ${JSON.stringify(second.exit())}\n${second.stderr()}`);
        return (await sentCount()) === TOTAL ? true : undefined;
      },
      { ms: 120_000, every: 250 },
    );
  } catch (err) {
    t.comment(`statuses: ${JSON.stringify(await byStatus(ids))}\nworker stderr:\n${second.stderr().slice(-3000)}`);
    throw err;
  }
  t.comment(`second worker brought all ${TOTAL} to sent in ${Date.now() - secondStart} ms`);
  t.same(await byStatus(ids), { '3': TOTAL }, 'every mail final: sent');
  const secondLog = (second.stdout() + second.stderr()).trim();
  if (secondLog) t.comment(`second worker logged:\n${secondLog.slice(-2000)}`);

  // No job left to run or failed for these mails (an expired job was retried, not failed).
  t.same(await settledSendJobs(dbs.pool, ids), { states: ['completed'], mails: TOTAL }, 'every mail had a job; every job completed, none failed');

  // ---- the mailbox: none lost, duplicates counted ---------------------------------------------
  const { stored, copies } = mailboxCopies(stack.mailboxDir);
  const mismatched = stored.filter((m) => !m.mailId || !m.messageId?.includes(m.mailId)).length;
  t.equal(mismatched, 0, 'every stored message names its mail in X-Cartero-Mail-Id and Message-ID');
  const idSet = new Set(ids);
  t.same([...copies.keys()].filter((id) => !idSet.has(id)), [], 'no message for a mail outside the batch');
  const lost = ids.filter((id) => !copies.has(id));
  t.same(lost, [], 'none lost: every mail has at least one message in the mailbox');
  const duplicated = ids.filter((id) => (copies.get(id) ?? 0) > 1);
  const extra = duplicated.reduce((s, id) => s + copies.get(id)! - 1, 0);
  t.equal(stored.length, TOTAL + extra, 'files = mails + extra copies');
  t.comment(`DUPLICATES: ${duplicated.length} mails delivered more than once (${extra} extra messages, ${stored.length} files for ${TOTAL} mails)`);
  t.ok(duplicated.length <= IN_FLIGHT, `duplicates small: ${duplicated.length} <= concurrency x batch size (${IN_FLIGHT})`);
  t.same(duplicated.filter((id) => !queuedAtKill.has(id)), [], 'only mails caught queued by the kill were sent twice');
  t.same(deliveredUnrecorded.filter((id) => !duplicated.includes(id)), [], 'every mail stored but unrecorded at the kill was sent again');

  // The logs tell the same story: a mail sent twice was handed to SMTP twice, and ends sent once.
  const { shapes, handedTwice } = await logShapes(dbs.pool, ids);
  t.comment(`log shapes: ${JSON.stringify(Object.fromEntries(shapes))}`);
  t.ok([...shapes.keys()].every((s) => s === '1,2,3' || s === '1,2,2,3'), 'every mail logged 1,2,3 (or 1,2,2,3 when retried after the kill)');
  const retried = new Set(handedTwice);
  t.same(duplicated.filter((id) => !retried.has(id)), [], 'every duplicate shows its second hand-off in the logs');
  t.same([...retried].filter((id) => !queuedAtKill.has(id)), [], 'only mails queued at the kill were handed to SMTP again');
});
