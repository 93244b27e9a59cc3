// Queue settings are read when testDatabases creates the queues (the release step): set first.
// A job left active by the killed worker is retried after 30 s (+ the 1 s retry delay), found by
// pg-boss's maintenance every 2 s; its mails' send lease lapses after a quarter of that. Not
// shorter: pg-boss stops waiting for a batch at its jobs' expiry (it fails them and the loop
// fetches another batch while the first still runs), and on a loaded machine a batch of 50 took
// longer than 5 s, which put more than a batch per loop in flight and burnt the jobs' retries.
process.env.SEND_JOB_EXPIRE_SECONDS = '30';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '2';

import { hostname } from 'node:os';
import t from 'tap';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { logShapes, mailApi, mailboxCopies, readMailbox, settledSendJobs, sleep, startSendStack, waitFor } from './helpers/send-stack.js';
import type { Proc } from './helpers/spawn.js';

/**
 * Fault suite, a worker killed: two worker dynos (separate processes on one database, as
 * `WORKER_DYNOS=2` runs them) share a 2,000-mail send; one is SIGKILLed in the middle and
 * started again, as a supervisor would. Every mail must end sent with at least one message in
 * the mailbox; the duplicates the kill causes (a 250 that arrived but was not recorded) are
 * counted and bounded by what the killed process had in flight: the mails it held queued at the
 * kill. Only those may be sent twice; the survivor's are not touched. The survivor and the
 * restarted dyno both take part in finishing the work.
 */
const BATCH_SIZE = 50;
const CONCURRENCY = 2;
/** What one worker process can have at SMTP at once: SEND_CONCURRENCY batches of SEND_BATCH_SIZE mails. */
const IN_FLIGHT = BATCH_SIZE * CONCURRENCY;
const SENDS = 20;
const PER_SEND = 100;
const TOTAL = SENDS * PER_SEND;
/** Killed once at least this many are sent (and before all are). */
const KILL_AFTER = 600;
/** ...and while the victim holds at least this many mails queued (at SMTP). */
const MID_BATCH = 20;

const stack = await startSendStack(t, { label: 'faultkill', publicUrl: 'https://track.faultkill.test' });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'faultkill.example', senders: [{ email: 'news', name: 'News' }] });
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
/** worker.ts names a worker `host:pid:random`: the prefix of a process's claims (mails.held_by). */
const workerPrefix = (p: Proc) => `${hostname()}:${p.pid}:`;
/** The queued mails each worker holds now (held_by -> mail ids). */
const queuedByHolder = async (ids: string[]): Promise<Map<string, string[]>> => {
  const { rows } = await dbs.pool.query<{ mail_id: string; held_by: string | null }>(
    'SELECT mail_id, held_by FROM mails WHERE mail_id = ANY ($1) AND status = 2',
    [ids],
  );
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.held_by ?? '', [...(out.get(r.held_by ?? '') ?? []), r.mail_id]);
  return out;
};
const heldBy = (holders: Map<string, string[]>, p: Proc) => [...holders].filter(([h]) => h.startsWith(workerPrefix(p))).flatMap(([, m]) => m);

t.test('two workers, one SIGKILLed mid-send of 2,000 mails and restarted: none lost, duplicates bounded by its in-flight mails', async (t) => {
  // ---- accept 2,000 mails over HTTP, no worker running yet ------------------------------------
  const ids: string[] = [];
  for (let s = 0; s < SENDS; s++) {
    const r = await api.send({
      from: 'news@faultkill.example',
      to: Array.from({ length: PER_SEND }, (_, i) => ({ email: `r${s}-${i}@example.org`, variables: { n: s * PER_SEND + i } })),
      subject: 'Fault kill {{n}}',
      html: '<p>Mail number {{n}} <a href="https://shop.example/">shop</a></p>',
    });
    if (!t.equal(r.status, 202, `send ${s} accepted`)) return t.comment(JSON.stringify(r.body));
    ids.push(...r.body.mails.map((m: any) => m.mail_id as string));
  }
  t.equal(new Set(ids).size, TOTAL, '2,000 distinct mail ids');
  const sentCount = () => count('SELECT count(*) AS n FROM mails WHERE mail_id = ANY ($1) AND status = 3', [ids]);

  // ---- two workers; one killed mid-send -------------------------------------------------------
  const started = Date.now();
  const victim = stack.spawnWorker(workerEnv);
  const survivor = stack.spawnWorker(workerEnv);
  const alive = (p: Proc, name: string) => {
    if (p.exit()) throw new Error(`${name} exited on its own: ${JSON.stringify(p.exit())}\n${p.stderr().slice(-3000)}`);
  };
  // Both take part before the kill: each has held mails at SMTP at some point.
  const seenBefore = new Set<string>();
  let lastSent = 0;
  let holdersSeen: string[] = [];
  const sentAtKill = await waitFor(
    `${KILL_AFTER} mails sent, by both workers`,
    async () => {
      alive(victim, 'the victim');
      alive(survivor, 'the survivor');
      const holders = await queuedByHolder(ids);
      const victimHolds = heldBy(holders, victim).length;
      if (victimHolds) seenBefore.add('victim');
      if (heldBy(holders, survivor).length) seenBefore.add('survivor');
      holdersSeen = [...new Set([...holdersSeen, ...holders.keys()])];
      const n = (lastSent = await sentCount());
      // In the middle of a batch: the victim has mails at SMTP right now.
      return n >= KILL_AFTER && seenBefore.size === 2 && victimHolds >= MID_BATCH ? n : undefined;
    },
    { ms: 300_000, every: 100 },
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${lastSent} sent, seen holding: ${[...seenBefore].join(', ')} (holders ${holdersSeen.join(', ')}; victim ${victim.pid}, survivor ${survivor.pid})`);
  });
  victim.signal('SIGKILL');
  t.same(await victim.waitExit(10_000), { code: null, signal: 'SIGKILL' }, 'the victim died of SIGKILL');
  // Sessions the kill cut are finished by the simulator (a DATA already ended is stored).
  await sleep(500);
  const holdersAtKill = await queuedByHolder(ids);
  const victimQueued = new Set(heldBy(holdersAtKill, victim));
  const survivorQueued = heldBy(holdersAtKill, survivor);
  const atKill = await byStatus(ids);
  t.comment(`killed after ${Date.now() - started} ms with ${sentAtKill} seen sent; statuses at kill ${JSON.stringify(atKill)}`);
  t.ok((atKill['3'] ?? 0) > 0 && (atKill['3'] ?? 0) < TOTAL, `some but not all sent at the kill (${atKill['3']}/${TOTAL})`);
  // The kill came once the victim held MID_BATCH mails at SMTP; between that read and the signal
  // it may still finish some (18 of 20 were left once in CI), so after the kill: some, not all.
  t.ok(victimQueued.size > 0, `the victim was killed with mails at SMTP: ${victimQueued.size} queued and held by it`);
  // At most IN_FLIGHT while every batch ends within its jobs' expiry; a batch that outlives it is
  // no longer waited for by pg-boss, and its loop takes another (docs/operations.md, Faults).
  t.comment(`the victim's mails in flight at the kill: ${victimQueued.size} (its loops' batches: ${IN_FLIGHT})`);
  const storedAtKill = new Set(readMailbox(stack.mailboxDir).map((m) => m.mailId));
  const deliveredUnrecorded = [...victimQueued].filter((id) => storedAtKill.has(id));
  t.comment(`at kill: the victim held ${victimQueued.size} queued (${deliveredUnrecorded.length} already stored: 250 not recorded); the survivor ${survivorQueued.length}`);

  // ---- the restarted dyno and the survivor finish ---------------------------------------------
  const restarted = stack.spawnWorker(workerEnv);
  const seenAfter = new Set<string>();
  try {
    await waitFor(
      'every mail sent after the kill',
      async () => {
        alive(survivor, 'the survivor');
        alive(restarted, 'the restarted worker');
        const holders = await queuedByHolder(ids);
        if (heldBy(holders, restarted).length) seenAfter.add('restarted');
        if (heldBy(holders, survivor).length) seenAfter.add('survivor');
        return (await sentCount()) === TOTAL ? true : undefined;
      },
      { ms: 400_000, every: 100 },
    );
  } catch (err) {
    t.comment(`statuses: ${JSON.stringify(await byStatus(ids))}\nsurvivor stderr:\n${survivor.stderr().slice(-2000)}\nrestarted stderr:\n${restarted.stderr().slice(-2000)}`);
    throw err;
  }
  t.comment(`all ${TOTAL} sent ${Date.now() - started} ms after the start`);
  t.same(await byStatus(ids), { '3': TOTAL }, 'every mail final: sent');
  t.same([...seenAfter].sort(), ['restarted', 'survivor'], 'after the kill both the survivor and the restarted dyno had mails at SMTP');
  t.equal(
    await count('SELECT count(*) AS n FROM mails WHERE mail_id = ANY ($1) AND held_by IS NOT NULL', [ids]),
    0,
    'no mail left claimed by a worker',
  );

  // No job left to run or failed (the victim's expired jobs were retried, not failed).
  t.same(await settledSendJobs(dbs.pool, ids), { states: ['completed'], mails: TOTAL }, 'every mail had a job; every job completed, none failed');

  // ---- the mailbox: none lost, duplicates counted and bounded ---------------------------------
  const { stored, copies } = mailboxCopies(stack.mailboxDir);
  const idSet = new Set(ids);
  t.same([...copies.keys()].filter((id) => !idSet.has(id)), [], 'no message for a mail outside the send');
  t.same(ids.filter((id) => !copies.has(id)), [], 'none lost: every mail has a message in the mailbox');
  const duplicated = ids.filter((id) => (copies.get(id) ?? 0) > 1);
  const extra = duplicated.reduce((s, id) => s + copies.get(id)! - 1, 0);
  t.equal(stored.length, TOTAL + extra, 'messages = mails + extra copies');
  t.comment(`DUPLICATES: ${duplicated.length} mails delivered twice or more (${extra} extra messages in ${stored.length} for ${TOTAL} mails); the victim had ${victimQueued.size} in flight, ${deliveredUnrecorded.length} of them stored but unrecorded`);
  t.ok(extra <= victimQueued.size, `extra messages (${extra}) <= the victim's mails in flight at the kill (${victimQueued.size})`);
  t.same(duplicated.filter((id) => !victimQueued.has(id)), [], "only the victim's in-flight mails were sent twice (none of the survivor's)");
  t.same(deliveredUnrecorded.filter((id) => !duplicated.includes(id)), [], 'every mail stored but unrecorded at the kill was sent again (at-least-once)');

  // The logs: a mail sent twice was handed to SMTP twice, and ends sent once.
  const { shapes, handedTwice } = await logShapes(dbs.pool, ids);
  t.comment(`log shapes: ${JSON.stringify(Object.fromEntries(shapes))}`);
  t.ok([...shapes.keys()].every((s) => s === '1,2,3' || s === '1,2,2,3'), 'every mail logged 1,2,3 (or 1,2,2,3 when handed again after the kill)');
  t.same(handedTwice.filter((id) => !victimQueued.has(id)), [], "only the victim's mails were handed to SMTP again");
});
