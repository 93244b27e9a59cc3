import t from 'tap';
import { waitFor } from './helpers/send-stack.js';
import { startWebhookBench } from './helpers/webhook-bench.js';
import { verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * Webhooks isolated from each other (docs/webhooks.md, Delivery): a receiver that never answers
 * holds WEBHOOK_CONCURRENCY attempts and as many jobs, no more, while another webhook of the same
 * instance gets every event; the deliveries it could not start yet are held by the worker (up to
 * WEBHOOK_HOLD_MAX, the rest left in the table), and after a graceful stop the next worker
 * delivers them all at once: the held ones got their jobs back, the others are read back from the
 * table (not after the minute sweep's two minutes). A worker dyno as its own process, a real
 * receiver on loopback.
 */
const { stack, dbs, receiver, a, api } = await startWebhookBench(t, 'webhookiso', 'iso.example');
// WEBHOOK_HOLD_MAX at its least, so of the silent webhook's 30 first events 10 are in flight, 10 held
// in memory and 10 let go to wait in the table.
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1', WEBHOOK_TIMEOUT_SECONDS: '15', WEBHOOK_CONCURRENCY: '10', WEBHOOK_HOLD_MAX: '10' };
let worker = stack.spawnWorker(ENV);

const EVENTS = ['mail.received', 'mail.queued', 'mail.sent'];
const MAILS = 15;
const hook = async (path: string) => (await api.call('POST', '/v1/webhooks', { name: path, url: receiver.url(path), events: EVENTS })).body as { id: number; secret: string };
const answeredOk = (path: string) => receiver.at(path).filter((r) => r.answered !== undefined && r.answered < 300);
const activeJobs = async () =>
  Number((await dbs.pool.query(`SELECT count(*) AS n FROM pgboss.job WHERE name = 'webhook.deliver' AND state = 'active'`)).rows[0].n);

/** Each mail's events, in the order first delivered, per webhook-id. */
function orderPerMail(rs: Received[]): Map<string, string[]> {
  const seen = new Set<string>();
  const out = new Map<string, string[]>();
  for (const r of [...rs].sort((x, y) => x.at - y.at)) {
    if (seen.has(r.headers['webhook-id']!)) continue;
    seen.add(r.headers['webhook-id']!);
    const m = r.event.data.mail_id as string;
    out.set(m, [...(out.get(m) ?? []), r.event.type]);
  }
  return out;
}

const slow = await hook('/slow');
const fast = await hook('/fast');
let slowAnswers = false;
/** The events of the silent receiver's first 10 requests (in flight when the worker stops). */
const firstTen = new Set<string>();
receiver.on('/slow', () => (slowAnswers ? { status: 200 } : 'hang'));

t.test('a receiver that never answers holds its own slots only: the other webhook gets every event meanwhile', async (t) => {
  const wave = async (n: number) => {
    const sent = await api.send({ from: 'news@iso.example', to: Array.from({ length: MAILS }, (_, i) => ({ email: `iso${n}-${i}@example.org` })), subject: 's', text: 'x' });
    t.equal(sent.status, 202);
  };
  // Two waves, the second once the silent receiver's room is full: its deliveries then come in
  // every batch the worker fetches, beside the other webhook's.
  await wave(1);
  await waitFor('10 requests held at /slow', async () => (receiver.at('/slow').length >= 10 ? true : undefined), { ms: 30_000 });
  await wave(2);
  const done = await waitFor(`${2 * MAILS * 3} events at /fast`, async () => {
    const ok = answeredOk('/fast');
    return new Set(ok.map((r) => r.headers['webhook-id'])).size >= 2 * MAILS * 3 ? ok : undefined;
  }, { ms: 60_000 });
  const atSlow = receiver.at('/slow');
  t.equal(atSlow.length, 10, 'the silent receiver got WEBHOOK_CONCURRENCY (10) requests of its 30 first events');
  t.ok(atSlow.every((r) => r.closedAt === undefined), 'all of them still unanswered: the other webhook did not wait for their timeout');
  t.ok(done.every((r) => verifies(fast.secret, r)));
  const order = orderPerMail(done);
  t.equal(order.size, 2 * MAILS);
  for (const [mail, types] of order) t.same(types, EVENTS, `mail ${mail}: every event, in order`);
  t.ok((await activeJobs()) <= 10, 'the silent webhook holds at most WEBHOOK_CONCURRENCY delivery jobs; the rest are held by the worker');
  for (const r of atSlow) firstTen.add(r.headers['webhook-id']!);
});

t.test('a graceful stop gives the held deliveries their jobs back, within the grace period: the next worker delivers every event, in order', async (t) => {
  // The silent receiver still holds its 10 requests: the stop waits for them 10 s, not their 15 s
  // timeout, so it ends within the process's 20 s grace (past it, the exit code would be 1).
  worker.signal('SIGTERM');
  t.match(await worker.waitExit(40_000), { code: 0 }, 'stopped cleanly');
  slowAnswers = true;
  receiver.releaseHeld();
  worker = stack.spawnWorker(ENV);
  // The held deliveries came back as jobs and the ones let go were read back from the table, at
  // once, not with the minute sweep two minutes later; the attempts cut by the stop, when their
  // jobs expired (timeout + 10 s).
  const heldBack = await waitFor('a held delivery attempted by the new worker', async () =>
    receiver.at('/slow').find((r) => r.answered === 200 && r.event.type === 'mail.received' && !firstTen.has(r.headers['webhook-id']!)), { ms: 30_000 });
  t.ok(heldBack, 'a delivery the first worker held, delivered');
  const done = await waitFor(`${2 * MAILS * 3} events at /slow`, async () => {
    const ok = answeredOk('/slow');
    return new Set(ok.map((r) => r.headers['webhook-id'])).size >= 2 * MAILS * 3 ? ok : undefined;
  }, { ms: 90_000 });
  t.ok(done.every((r) => verifies(slow.secret, r)));
  const order = orderPerMail(done);
  t.equal(order.size, 2 * MAILS);
  for (const [mail, types] of order) t.same(types, EVENTS, `mail ${mail}: every event, in order`);
  const log = await waitFor('every delivery settled', async () => {
    const l = (await api.call('GET', `/v1/webhooks/${slow.id}/deliveries?page_size=100`)).body.data;
    return l.every((x: any) => x.status !== 'pending') ? l : undefined;
  });
  t.ok(log.length >= 2 * MAILS * 3, 'the log lists every delivery');
});
