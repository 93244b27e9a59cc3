import t from 'tap';
import { FANOUT_DEFAULTS } from '../workers/jobs/webhook-fanout.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, startSendStack, waitFor } from './helpers/send-stack.js';
import { startTestWeb } from './helpers/web.js';
import { startReceiver } from './helpers/webhook-receiver.js';

/**
 * Fair scheduling across instances (docs/webhooks.md, Fairness): instance A has 20 webhooks (the
 * default WEBHOOK_MAX_PER_INSTANCE) on a slow receiver and a backlog of 300 events, 6,000
 * deliveries, waiting in the outbox before the worker starts; then instance B sends a test event.
 * B's delivery must not queue behind A's backlog: the fan-out creates it within one tick's budget
 * of A's deliveries, the queue hands it out within about one fetch of A's jobs, and it reaches
 * B's receiver while nearly all of A's deliveries are still pending. Orders and counts, not
 * times. The API over HTTP, a worker dyno as its own process, real receivers on loopback.
 */
const PUBLIC_URL = 'https://track.cartero.test';
const stack = await startSendStack(t, { label: 'webhookfair', publicUrl: PUBLIC_URL });
const { dbs } = stack;
const web = await startTestWeb(t, dbs, { env: { SMTP_URL: stack.simulator.url, PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: 'true' } });
const receiver = await startReceiver(t);
const SCOPES = ['mail:send', 'mail:read', 'webhooks:read', 'webhooks:write'];

const HOOKS = 20;
const MAILS = 300;
const BACKLOG = HOOKS * MAILS;
/** pg-boss's fetch size in the delivery consumer (workers/jobs/webhook-deliver.ts). */
const FETCH = 250;

const a = await makeTenant(dbs.pool, { scopes: SCOPES });
const b = await makeTenant(dbs.pool, { scopes: SCOPES });
const apiB = mailApi(web.url, b.headers);
let hookB: { id: number };
let worker: ReturnType<typeof stack.spawnWorker>;

/** Each delivery job of the instance or webhook: when it was enqueued and fetched (pg-boss's job table, or its archive once done). */
const JOBS = `WITH j AS (SELECT data, created_on, started_on FROM pgboss.job WHERE name = 'webhook.deliver'
                          UNION ALL SELECT data, created_on, started_on FROM pgboss.archive WHERE name = 'webhook.deliver')
              SELECT d.instance_id, d.webhook_id, j.created_on, j.started_on FROM j JOIN webhook_deliveries d ON d.id = (j.data->>'delivery_id')::bigint`;

t.test("one instance's backlog in the outbox does not delay another instance's test event", async (t) => {
  await makeSenders(dbs.pool, a.tenant, { domain: 'fair-a.example', senders: [{ email: 'news', name: 'News' }] });
  const apiA = mailApi(web.url, a.headers);
  // A slow receiver: A's 20 webhooks get 10 attempts in flight each, one second apiece.
  receiver.on('/a', () => ({ status: 200, delayMs: 1000 }));
  for (let i = 0; i < HOOKS; i++) {
    const r = await apiA.call('POST', '/v1/webhooks', { name: `a${i}`, url: receiver.url('/a'), events: ['mail.received'] });
    t.equal(r.status, 201);
  }
  const sent = await apiA.send({ from: 'news@fair-a.example', to: Array.from({ length: MAILS }, (_, i) => ({ email: `a${i}@example.org` })), subject: 's', text: 'x' });
  t.equal(sent.status, 202);

  hookB = (await apiB.call('POST', '/v1/webhooks', { name: 'b', url: receiver.url('/b') })).body as { id: number };
  t.equal((await apiB.call('POST', `/v1/webhooks/${hookB.id}/test`)).status, 202);

  // Everything is in the outbox, A's 300 events before B's one; now the worker starts.
  worker = stack.spawnWorker({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const atB = await waitFor("B's test event delivered", async () => {
    const got = receiver.at('/b').find((r) => r.event?.type === 'webhook.test' && r.answered === 200);
    return got ? { aReceived: receiver.at('/a').length } : undefined;
  }, { ms: 60_000 });
  t.ok(atB.aReceived < BACKLOG / 10, `B's delivery arrived while A's backlog was mostly pending (${atB.aReceived} of ${BACKLOG} at A's receiver)`);

  const { rows: [order] } = await dbs.pool.query(
    `WITH b AS (SELECT min(id) AS id FROM webhook_deliveries WHERE webhook_id = $2)
     SELECT count(*) FILTER (WHERE d.id < b.id)::int AS before_b FROM webhook_deliveries d, b WHERE d.instance_id = $1`,
    [a.tenant.instanceId, hookB.id],
  );
  t.ok(order.before_b <= FANOUT_DEFAULTS.deliveries,
    `the fan-out made B's delivery after at most one tick's budget of A's (${order.before_b} <= ${FANOUT_DEFAULTS.deliveries}; A has ${BACKLOG})`);

  // pg-boss keeps each job's fetch time (started_on), in its job table or, once done and
  // archived, in its archive.
  const { rows: [fetched] } = await dbs.pool.query(
    `WITH jd AS (${JOBS})
     SELECT count(*) FILTER (WHERE instance_id = $1 AND started_on < (SELECT min(started_on) FROM jd WHERE webhook_id = $2))::int AS a_before_b,
            count(*) FILTER (WHERE instance_id = $1)::int AS a_jobs
       FROM jd`,
    [a.tenant.instanceId, hookB.id],
  );
  t.ok(fetched.a_before_b <= 2 * FETCH, `the queue handed out B's job after about one fetch of A's (${fetched.a_before_b} of A's jobs before it)`);

  // A's backlog is all there and keeps flowing: every event becomes its 20 deliveries.
  const made = await waitFor(`A's ${BACKLOG} deliveries created`, async () => {
    const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE instance_id = $1', [a.tenant.instanceId]);
    return rows[0].n >= BACKLOG ? rows[0].n : undefined;
  }, { ms: 60_000 });
  t.equal(made, BACKLOG, 'one delivery per event and webhook, none twice');
  t.ok(fetched.a_jobs > 0, "A's jobs were being handed out too");
});

t.test("one instance's backlog in the delivery queue does not delay another instance's test event", async (t) => {
  // A graceful stop gives every delivery the worker held (A's backlog, beyond its webhooks' room)
  // its job back: thousands of A's jobs now wait in the queue, before B's next one.
  worker.signal('SIGTERM');
  t.match(await worker.waitExit(40_000), { code: 0 }, 'the worker stopped cleanly');
  const { rows: [waiting] } = await dbs.pool.query(
    `SELECT count(*)::int AS n FROM pgboss.job j JOIN webhook_deliveries d ON d.id = (j.data->>'delivery_id')::bigint
      WHERE j.name = 'webhook.deliver' AND j.state = 'created' AND d.instance_id = $1`,
    [a.tenant.instanceId],
  );
  t.ok(waiting.n >= 4 * FETCH, `A has a backlog of jobs waiting (${waiting.n})`);
  const seen = receiver.at('/b').length;
  t.equal((await apiB.call('POST', `/v1/webhooks/${hookB.id}/test`)).status, 202);
  worker = stack.spawnWorker({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  await waitFor("B's second test event delivered", async () => (receiver.at('/b').filter((r) => r.answered === 200).length > seen ? true : undefined), { ms: 60_000 });

  // Counted from the moment B's job exists: A's jobs the queue handed out before it.
  const { rows: [order] } = await dbs.pool.query(
    `WITH jd AS (${JOBS}), bj AS (SELECT created_on, started_on FROM jd WHERE webhook_id = $2 ORDER BY created_on DESC LIMIT 1)
     SELECT count(*) FILTER (WHERE jd.instance_id = $1 AND jd.started_on > bj.created_on AND jd.started_on < bj.started_on)::int AS a_between,
            count(*) FILTER (WHERE jd.instance_id = $1 AND jd.created_on < bj.created_on AND (jd.started_on IS NULL OR jd.started_on > bj.started_on))::int AS a_after
       FROM jd, bj`,
    [a.tenant.instanceId, hookB.id],
  );
  t.ok(order.a_between <= 2 * FETCH, `B's job was handed out within one fetch of being enqueued (${order.a_between} of A's jobs in between)`);
  t.ok(order.a_after >= FETCH, `ahead of older A jobs (${order.a_after} enqueued before it, handed out after it)`);
});
