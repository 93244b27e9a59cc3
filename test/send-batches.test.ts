import type PgBoss from 'pg-boss';
import t from 'tap';
import { SEND_JOB_MAILS, SEND_MAIL_QUEUE, sendMailJobs } from '../domain/job-queue.js';
import { batchesOf, parseJobData } from '../workers/jobs/send-mail/index.js';
import { WeightedSlots } from '../workers/machinery/weighted-slots.js';

/**
 * The send queue's jobs are batches (issue 42, docs/sending.md "The send queue"): how they are
 * cut at acceptance, read by the worker (both shapes: the batch, and the one-mail job of the code
 * before), and put together into the worker's batches. The send tests (send-worker,
 * send-retry-budget, send-batches-migration, the kill and fault suites) run them end to end.
 */

const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `M${String(from + i).padStart(5, '0')}`);
const job = (data: unknown, id = 'j'): PgBoss.Job<unknown> => ({ id, name: SEND_MAIL_QUEUE, data }) as PgBoss.Job<unknown>;

t.test('acceptance cuts a message into jobs of at most 100 mails, in order', async (t) => {
  const mails = ids(250);
  const jobs = sendMailJobs(7, mails);
  t.same(jobs.map((j) => j.data.mail_ids.length), [100, 100, 50]);
  t.same(jobs.flatMap((j) => j.data.mail_ids), mails, 'every mail once, in order');
  t.ok(jobs.every((j) => j.name === SEND_MAIL_QUEUE && j.data.instance_id === 7 && !('startAfter' in j)), 'to start now');
  const at = new Date('2026-12-08T02:00:00Z');
  t.same(sendMailJobs(7, ids(3), at).map((j) => j.startAfter), [at], 'a retry starts at its time');
  t.same(sendMailJobs(7, []), [], 'no mails, no job');
  t.equal(SEND_JOB_MAILS, 100);
});

t.test('the worker reads a batch and the one-mail job of the code before issue 42, and nothing else', async (t) => {
  t.same(parseJobData({ instance_id: 3, mail_ids: ['A1', 'B2'] }), { instance_id: 3, mail_ids: ['A1', 'B2'] });
  t.same(parseJobData({ instance_id: 3, mail_id: 'A1' }), { instance_id: 3, mail_ids: ['A1'] }, 'the old shape is a batch of one');
  for (const bad of [
    null,
    'x',
    [],
    { instance_id: 3 },
    { instance_id: 0, mail_ids: ['A1'] },
    { instance_id: 1.5, mail_ids: ['A1'] },
    { instance_id: '3', mail_ids: ['A1'] },
    { instance_id: 3, mail_ids: [] },
    { instance_id: 3, mail_ids: 'A1' },
    { instance_id: 3, mail_ids: ['A1', 7] },
    { instance_id: 3, mail_ids: ['A-1'] },
    { instance_id: 3, mail_ids: ids(101) },
    { instance_id: 3, mail_id: '' },
    { instance_id: 3, mail_id: 'x'.repeat(65) },
  ]) {
    t.equal(parseJobData(bad), undefined, `refused: ${JSON.stringify(bad)?.slice(0, 60)}`);
  }
});

t.test('fetched jobs go into batches of at most SEND_BATCH_SIZE mails, never splitting a job', async (t) => {
  const jobs = [
    job({ instance_id: 1, mail_ids: ids(60) }, 'a'),
    job({ instance_id: 1, mail_ids: ids(30, 100) }, 'b'),
    job({ instance_id: 2, mail_id: 'X1' }, 'c'),
    job({ instance_id: 2, mail_ids: ids(100, 200) }, 'd'),
    job('malformed', 'e'),
    job({ instance_id: 1, mail_ids: ids(10, 400) }, 'f'),
  ];
  t.same(batchesOf(jobs, 100).map((b) => b.map((j) => j.id)), [['a', 'b', 'c'], ['d'], ['e', 'f']], '91 mails, a whole job of 100, then the rest (a malformed job counts as one)');
  t.same(batchesOf(jobs, 50).map((b) => b.map((j) => j.id)), [['a'], ['b', 'c'], ['d'], ['e', 'f']], 'a job larger than the batch size is a batch alone');
  t.same(batchesOf([], 100), []);
});

t.test('work past the bound waits its turn, in order; a piece larger than the bound runs alone', async (t) => {
  const slots = new WeightedSlots(100);
  const order: string[] = [];
  const run = async (name: string, weight: number) => {
    const give = await slots.take(weight);
    order.push(name);
    return give;
  };
  const a = await run('a', 60);
  const b = run('b', 50); // 110 > 100: waits for a
  const c = run('c', 10); // would fit, but comes after b: waits too (in order)
  await new Promise((r) => setImmediate(r));
  t.same(order, ['a'], 'b and c wait while a holds 60 of 100');
  a();
  a(); // given twice: counted once
  const giveB = await b;
  const giveC = await c;
  t.same(order, ['a', 'b', 'c'], 'b, then c, once a is done (50 + 10 fit)');
  const big = run('big', 250);
  await new Promise((r) => setImmediate(r));
  t.same(order.length, 3, 'a piece over the bound waits while anything runs');
  giveB();
  giveC();
  const giveBig = await big;
  t.same(order.at(-1), 'big', 'and then runs alone');
  const small = run('small', 1);
  await new Promise((r) => setImmediate(r));
  t.same(order.at(-1), 'big', 'nothing joins it');
  giveBig();
  (await small)();
  t.same(order.at(-1), 'small');
});
