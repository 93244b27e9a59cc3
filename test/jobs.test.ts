// Read when testDatabases runs the release step: values other than the defaults, so the send
// queue's policy is seen to come from the configuration.
process.env.SEND_RETRY_LIMIT = '3';
process.env.SEND_RETRY_DELAY_SECONDS = '7';
process.env.SEND_JOB_EXPIRE_SECONDS = '123';

import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../config/config.js';
import { createBoss } from '../workers/machinery/queue.js';
import { startWorker } from '../runtime/worker.js';
import { JOBS, queuePolicies } from '../workers/jobs/index.js';
import { testDatabases } from './helpers/databases.js';
import { startTestMailbox } from './helpers/mailbox.js';
import { makeTenant } from './helpers/fixtures.js';
import { waitFor } from './helpers/send-stack.js';

/**
 * The job list (workers/jobs/index.ts) is the one registry: the release step creates exactly its queues
 * with their policies, the worker consumes every one of them, and a payload a job's parse refuses
 * is completed with an error in the log, never handed to the handler nor failing the job.
 */

// The queue names stored in existing databases: the list must keep them exactly.
const QUEUE_NAMES = [
  'consent.confirmation-mail',
  'consent.expire-pending',
  'deliverability.alerts',
  'deliverability.rollup',
  'domains.verify-dns',
  'form.dataset-feed',
  'form.submission-mail',
  'mail.release-onhold',
  'mail.retention',
  'mail.send',
  'providers.resolve-mx',
  'restrictions.soft-bounces',
  'restrictions.soft-bounces-sweep',
  'webhook.deliver',
  'webhook.housekeeping',
  'webhook.sweep',
  'worker.heartbeat',
];

const dbs = await testDatabases(t, 'jobs');

t.test('release creates exactly the queues of the list, with their policies', async (t) => {
  t.same(JOBS.map((j) => j.name).sort(), QUEUE_NAMES, 'queue names unchanged');
  const { rows } = await dbs.pool.query<{ name: string; policy: string; retry_limit: number | null; retry_delay: number | null; retry_backoff: boolean | null; expire_seconds: number | null }>(
    'SELECT name, policy, retry_limit, retry_delay, retry_backoff, expire_seconds FROM pgboss.queue ORDER BY name',
  );
  t.same(rows.map((r) => r.name), QUEUE_NAMES, 'one queue per job, no other');
  const policies = queuePolicies({ send: loadConfig(process.env).send });
  for (const p of policies) {
    const row = rows.find((r) => r.name === p.name)!;
    t.equal(row.policy, p.policy ?? 'standard', `${p.name} policy`);
    if (p.retryLimit !== undefined) t.equal(row.retry_limit, p.retryLimit, `${p.name} retry limit`);
    if (p.retryDelay !== undefined) t.equal(row.retry_delay, p.retryDelay, `${p.name} retry delay`);
    if (p.retryBackoff !== undefined) t.equal(row.retry_backoff, p.retryBackoff, `${p.name} retry backoff`);
    if (p.expireInSeconds !== undefined) t.equal(row.expire_seconds, p.expireInSeconds, `${p.name} expiry`);
  }
  const send = rows.find((r) => r.name === 'mail.send')!;
  t.same([send.retry_limit, send.retry_delay, send.retry_backoff, send.expire_seconds], [3, 7, true, 123], 'send policy from SEND_RETRY_* and SEND_JOB_EXPIRE_SECONDS');
  const soft = rows.find((r) => r.name === 'restrictions.soft-bounces')!;
  t.same([soft.policy, soft.retry_limit, soft.retry_delay, soft.retry_backoff, soft.expire_seconds], ['short', 5, 30, true, 600], 'soft-bounce policy unchanged');
  for (const name of ['worker.heartbeat', 'mail.release-onhold', 'mail.retention', 'restrictions.soft-bounces-sweep', 'consent.expire-pending']) {
    t.equal(rows.find((r) => r.name === name)!.policy, 'singleton', `${name} is a singleton queue`);
  }
});

t.test('parse refuses malformed payloads', async (t) => {
  for (const job of JOBS) {
    for (const bad of [[1, 2], 'text', 42]) t.equal(job.parse(bad), undefined, `${job.name} refuses ${JSON.stringify(bad)}`);
  }
});

t.test('the worker consumes every queue of the list; a malformed job is completed and logged', async (t) => {
  const { simulator } = await startTestMailbox(t);
  const lines: Array<{ level: number; jobId?: string; msg: string }> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const worker = await startWorker(
    loadConfig({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, SMTP_URL: simulator.url, PUBLIC_URL: 'https://cartero.test', LOG_LEVEL: 'info' }),
    pino({ level: 'info' }, sink),
  );
  t.teardown(() => worker.stop());
  const boss = createBoss(dbs.databaseUrl, { supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  t.teardown(() => boss.stop({ graceful: false, wait: true }));

  const state = async (name: string, id: string) => (await boss.getJobById(name, id))?.state;
  for (const job of JOBS) {
    // pg-boss's send takes only objects: the malformed payload goes in as a producer bug would.
    const { rows } = await dbs.pool.query<{ id: string }>(`INSERT INTO pgboss.job (name, data) VALUES ($1, '["not", "a", "payload"]'::jsonb) RETURNING id`, [job.name]);
    const id = rows[0]!.id;
    t.ok(id, `${job.name}: malformed job sent`);
    const done = await waitFor(`${job.name} job ${id} settled`, async () => {
      const s = await state(job.name, id);
      return s === 'completed' || s === 'failed' ? s : undefined;
    });
    t.equal(done, 'completed', `${job.name}: a worker took the malformed job and completed it`);
    t.ok(lines.some((l) => l.level >= 50 && l.jobId === id && /malformed/.test(l.msg)), `${job.name}: the refusal is logged as an error`);
  }
  // The handlers still work after a refusal: a well-formed threshold job for a real instance.
  const a = await makeTenant(dbs.pool);
  const id = (await boss.send('restrictions.soft-bounces', { instance_id: a.tenant.instanceId }))!;
  t.equal(await waitFor('soft-bounce job settled', async () => {
    const s = await state('restrictions.soft-bounces', id);
    return s === 'completed' || s === 'failed' ? s : undefined;
  }), 'completed', 'a well-formed job is handled');
  t.ok(await waitFor('heartbeat', async () => (await dbs.pool.query('SELECT 1 FROM worker_heartbeats WHERE worker_id = $1', [worker.workerId])).rowCount || undefined), 'the start-up heartbeat ran');
});
