import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { waitFor } from './helpers/send-stack.js';
import { startWebhookBench } from './helpers/webhook-bench.js';
import { verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * Webhooks across time and crashes, each with a worker dyno as its own process:
 *  - secret rotation as a receiver built on standardwebhooks sees it, inside the 24 h overlap and
 *    after it, the worker's clock moved by WEBHOOK_CLOCK_OFFSET_SECONDS (the controllable clock of
 *    docs/webhooks.md) instead of waiting a day;
 *  - a worker SIGKILLed while its attempts are at the receiver loses no event: each is delivered
 *    by the next worker, in order per mail, and the log shows the interrupted attempt.
 */
const { stack, dbs, receiver, a, api } = await startWebhookBench(t, 'webhookcrash', 'crash.example');
// A timeout well past the moment the kill test's three attempts are all hanging: with 4 s, a loaded
// host let the first attempt time out (finished, not interrupted) before the third arrived.
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1', WEBHOOK_TIMEOUT_SECONDS: '12' };
let worker = stack.spawnWorker(ENV);

const signatures = (r: Received) => r.headers['webhook-signature']!.split(' ');
async function testEvent(id: number, path: string): Promise<Received> {
  const before = receiver.at(path).length;
  t.equal((await api.call('POST', `/v1/webhooks/${id}/test`)).status, 202);
  return waitFor(`a test event at ${path}`, async () => receiver.at(path)[before], { ms: 20_000 });
}

t.test('rotation: two signatures (new first) for 24 h, one with expire_previous, the oldest dropped by a second rotation', async (t) => {
  const created = (await api.call('POST', '/v1/webhooks', { name: 'rot', url: receiver.url('/rot'), events: ['webhook.test'] })).body;
  const s1 = created.secret as string;
  const one = await testEvent(created.id, '/rot');
  t.ok(verifies(s1, one));
  t.equal(signatures(one).length, 1);

  const s2 = (await api.call('POST', `/v1/webhooks/${created.id}/rotate-secret`)).body.secret as string;
  const two = await testEvent(created.id, '/rot');
  t.ok(verifies(s2, two), 'the new secret verifies');
  t.ok(verifies(s1, two), 'the previous one too, inside the overlap');
  t.equal(signatures(two).length, 2);
  const ts = new Date(Number(two.headers['webhook-timestamp']) * 1000);
  t.equal(signatures(two)[0], new Webhook(s2).sign(two.headers['webhook-id']!, ts, two.body), "the new secret's signature first");

  const s3 = (await api.call('POST', `/v1/webhooks/${created.id}/rotate-secret`, { expire_previous: true })).body.secret as string;
  const three = await testEvent(created.id, '/rot');
  t.ok(verifies(s3, three));
  t.notOk(verifies(s2, three), 'expire_previous: the previous one no longer signs');
  t.equal(signatures(three).length, 1);

  await api.call('POST', `/v1/webhooks/${created.id}/rotate-secret`);
  const s5 = (await api.call('POST', `/v1/webhooks/${created.id}/rotate-secret`)).body.secret as string;
  const four = await testEvent(created.id, '/rot');
  t.ok(verifies(s5, four));
  t.notOk(verifies(s3, four), 'rotating again inside the overlap drops the oldest');
  t.equal(signatures(four).length, 2);
  t.same(await dbs.pool.query('SELECT 1 FROM webhooks WHERE id = $1 AND previous_secret IS NOT NULL', [created.id]).then((r) => r.rowCount), 1);
  rotation = { id: created.id, newest: s5, previous: (await dbs.pool.query('SELECT previous_secret FROM webhooks WHERE id = $1', [created.id])).rows[0].previous_secret };
});
let rotation: { id: number; newest: string; previous: string } | undefined;

t.test('a worker SIGKILLed mid-delivery loses no event; the next worker delivers each, in order per mail', async (t) => {
  const hook = (await api.call('POST', '/v1/webhooks', { name: 'kill', url: receiver.url('/kill'), events: ['mail.received', 'mail.queued', 'mail.sent'] })).body;
  let killed = false;
  // Until the kill, every first attempt of an event stays at the receiver unanswered.
  receiver.on('/kill', () => (killed ? { status: 200 } : 'hang'));
  const sent = await api.send({ from: 'news@crash.example', to: [1, 2, 3].map((i) => ({ email: `k${i}@example.org` })), subject: 's', text: 'x' });
  t.equal(sent.status, 202);
  const mailIds: string[] = sent.body.mails.map((m: any) => m.mail_id);
  for (const id of mailIds) await api.waitFinal(id);
  await waitFor('three attempts in flight', async () => (receiver.at('/kill').length >= 3 ? true : undefined), { ms: 20_000 });
  worker.signal('SIGKILL');
  t.same(await worker.waitExit(10_000), { code: null, signal: 'SIGKILL' }, 'killed');
  killed = true;
  receiver.releaseHeld();
  // The next worker's clock is a day and an hour ahead: past the rotation's overlap (next test).
  worker = stack.spawnWorker({ ...ENV, WEBHOOK_CLOCK_OFFSET_SECONDS: String(25 * 3600) });
  const done = await waitFor('9 events delivered', async () => {
    const ok = receiver.at('/kill').filter((r) => r.answered === 200);
    return new Set(ok.map((r) => r.headers['webhook-id'])).size >= 9 ? ok : undefined;
  }, { ms: 90_000 });
  t.ok(done.every((r) => verifies(hook.secret, r)));
  for (const id of mailIds) {
    const first = new Map<string, string>();
    for (const r of done.filter((x) => x.event.data.mail_id === id)) if (!first.has(r.headers['webhook-id']!)) first.set(r.headers['webhook-id']!, r.event.type);
    t.same([...first.values()], ['mail.received', 'mail.queued', 'mail.sent'], `mail ${id}: every event, in order`);
  }
  const log = (await api.call('GET', `/v1/webhooks/${hook.id}/deliveries?page_size=100`)).body.data;
  t.equal(log.filter((x: any) => /interrupted/.test(x.error ?? '')).length, 3, 'the three killed attempts are in the log as interrupted');
  t.ok(log.every((x: any) => x.status !== 'pending'));
});

t.test('after the overlap (worker clock +25 h) only the new secret signs; the old one alone fails', async (t) => {
  t.ok(rotation);
  const r = await testEvent(rotation!.id, '/rot');
  t.ok(verifies(rotation!.newest, r), 'the new secret verifies');
  t.notOk(verifies(rotation!.previous, r), 'the previous one fails past its expiry');
  t.equal(signatures(r).length, 1);
});
