import { pino } from 'pino';
import t from 'tap';
import { consumeJobs } from '../workers/machinery/job-consumer.js';
import { createBoss } from '../workers/machinery/queue.js';
import { testDatabases } from './helpers/databases.js';
import { waitFor } from './helpers/send-stack.js';

/**
 * The queue consumer of the send and webhook jobs (workers/machinery/job-consumer.ts) against a
 * real pg-boss: a batch that fails as a whole is failed in one statement per reason, with its
 * reason kept on every job (pg-boss's types list a reason only beside one id: the array form the
 * consumer uses is checked here). The send worker's strict bound on mails at work is
 * test/send-batches.test.ts's (WeightedSlots) and multi-dyno's.
 */
const dbs = await testDatabases(t, 'jobconsumer');
const boss = createBoss(dbs.databaseUrl, { supervise: false, schedule: false });
boss.on('error', () => {});
await boss.start();
t.teardown(() => boss.stop({ graceful: false, wait: true }));
const logger = pino({ level: 'silent' });

t.test('a batch that fails whole: every job failed, with its reason', async (t) => {
  const queue = 'test.consumer-fail';
  await boss.createQueue(queue, { name: queue, retryLimit: 0 });
  await boss.insert(Array.from({ length: 5 }, (_, i) => ({ name: queue, data: { i } })));
  let fetched = 0;
  const consumer = consumeJobs(boss, queue, { batchSize: 5, maxActive: 5, pollMs: 50, logger }, async (jobs) => {
    fetched += jobs.length;
    throw new Error('the batch could not run');
  });
  const failed = async () =>
    (await dbs.pool.query<{ message: string | null }>("SELECT output->>'message' AS message FROM pgboss.job WHERE name = $1 AND state = 'failed'", [queue])).rows;
  await waitFor('the jobs failed', async () => ((await failed()).length === 5 ? true : undefined), { ms: 20_000 });
  await consumer.stop(1_000);
  t.equal(fetched, 5);
  t.same((await failed()).map((r) => r.message), Array(5).fill('the batch could not run'), 'the reason on every job');
});
