import t from 'tap';
import { lift } from '../domain/restrictions/restrictions.js';
import { withTenant } from '../domain/tenancy/context.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { clickToken, openToken } from '../domain/tracking/tokens.js';
import { postEvent } from '../domain/webhooks/post.js';
import { receiverPolicy } from '../domain/webhooks/receiver-address.js';
import { loadConfig } from '../config/config.js';
import { createBoss } from '../workers/machinery/queue.js';
import { webhookSweepJob } from '../workers/jobs/webhook-housekeeping.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, sleep, startSendStack, waitFor } from './helpers/send-stack.js';
import { startTestWeb } from './helpers/web.js';
import { startReceiver, verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * Webhooks end to end: the API over HTTP, a worker dyno as its own process, real SMTP to the
 * mailbox simulator, and a real receiver on loopback that verifies every delivery with the
 * official standardwebhooks library. Retries on a schedule of seconds; the rules that pause a
 * webhook set low so a test can reach them.
 */
const PUBLIC_URL = 'https://track.cartero.test';
const stack = await startSendStack(t, { label: 'webhooks', publicUrl: PUBLIC_URL, fastRetries: true });
const { dbs } = stack;
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1',
  WEBHOOK_TIMEOUT_SECONDS: '1',
  WEBHOOK_PAUSE_AFTER: '4s',
  WEBHOOK_PAUSE_AFTER_FAILURES: '6',
};
// The stack's web refuses private receivers (the default); this one allows them, as npm start does.
const web = await startTestWeb(t, dbs, { env: { SMTP_URL: stack.simulator.url, PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: 'true' } });
const worker = stack.spawnWorker(WEBHOOK_ENV);
t.teardown(() => {
  if (process.env.WEBHOOKS_TEST_DEBUG) console.error(worker.stdout(), worker.stderr());
});
const receiver = await startReceiver(t);
const secret = await trackingSecret(dbs.pool);
const SCOPES = ['mail:send', 'mail:read', 'webhooks:read', 'webhooks:write'];

async function tenant() {
  const a = await makeTenant(dbs.pool, { scopes: SCOPES });
  await makeSenders(dbs.pool, a.tenant, { domain: `${a.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
  return { ...a, api: mailApi(web.url, a.headers), from: `news@${a.slug}.example` };
}
type T = Awaited<ReturnType<typeof tenant>>;

async function createHook(a: T, path: string, events: string[] | null = null) {
  const r = await a.api.call('POST', '/v1/webhooks', { name: path, url: receiver.url(path), events });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; secret: string };
}

/** Waits for `n` deliveries at a path answered 2xx. */
const delivered = (path: string, n: number, ms = 30_000) =>
  waitFor(`${n} deliveries at ${path}`, async () => {
    const ok = receiver.at(path).filter((r) => r.answered !== undefined && r.answered < 300);
    return ok.length >= n ? ok : undefined;
  }, { ms });

const typesOf = (rs: Received[]) => rs.map((r) => r.event.type);

/**
 * What an absence check waits for instead of a pause: the fan-out has seen every event of the
 * instance (no outbox row left for webhooks) and nothing of the webhook is left to go out: no
 * pending delivery and no delivery job waiting or running, whatever the machine's speed. With
 * `horizonSeconds`, a delivery or job due later than that (a Retry-After of a day) is left aside.
 */
async function quiet(instanceId: number, hookId: number, horizonSeconds: number | null = null): Promise<void> {
  await waitFor(`webhook ${hookId}: nothing left to go out`, async () => {
    const { rows } = await dbs.pool.query<{ outbox: number; pending: number; jobs: number }>(
      `SELECT (SELECT count(*)::int FROM event_outbox WHERE instance_id = $1 AND NOT webhooks_done) AS outbox,
              (SELECT count(*)::int FROM webhook_deliveries WHERE webhook_id = $2 AND status = 'pending'
                 AND ($3::int IS NULL OR next_attempt_at IS NULL OR next_attempt_at <= now() + $3 * interval '1 second')) AS pending,
              (SELECT count(*)::int FROM pgboss.job j JOIN webhook_deliveries d ON d.id = (j.data->>'delivery_id')::bigint
                WHERE j.name = 'webhook.deliver' AND j.state < 'completed' AND d.webhook_id = $2
                  AND ($3::int IS NULL OR j.start_after <= now() + $3 * interval '1 second')) AS jobs`,
      [instanceId, hookId, horizonSeconds],
    );
    const r = rows[0]!;
    return r.outbox === 0 && r.pending === 0 && r.jobs === 0 ? true : undefined;
  });
}

t.test('the API: create, read, list, patch, delete; secrets shown only at creation; errors', async (t) => {
  const a = await tenant();
  const first = await a.api.call('POST', '/v1/webhooks', { name: 'one', url: receiver.url('/api-one'), events: ['mail.sent', 'mail.bounced'] });
  t.equal(first.status, 201);
  t.match(first.body.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'whsec_ secret');
  t.equal(first.headers.get('cache-control'), 'no-store', 'the secret is kept by no cache');
  t.same(first.body.events, ['mail.sent', 'mail.bounced']);
  t.equal(first.body.is_active, true);
  t.equal(first.body.failing_since, null);
  t.equal(first.body.consecutive_failures, 0);
  const second = await a.api.call('POST', '/v1/webhooks', { name: 'two', url: receiver.url('/api-two') });
  t.equal(second.body.events, null, 'events omitted: all');

  const list = await a.api.call('GET', '/v1/webhooks');
  t.equal(list.status, 200);
  t.same(list.body.data.map((w: any) => w.id), [first.body.id, second.body.id], 'creation order');
  t.ok(list.body.data.every((w: any) => !('secret' in w) && 'failing_since' in w), 'never the secret; failing_since present');
  const one = await a.api.call('GET', `/v1/webhooks/${first.body.id}`);
  t.equal(one.status, 200);
  t.notOk('secret' in one.body);

  t.equal((await a.api.call('POST', '/v1/webhooks', { name: 'x', url: receiver.url('/x'), events: ['mail.nope'] })).status, 422, 'unknown type 422');
  const bad = await a.api.call('POST', '/v1/webhooks', { name: 'x', url: 'not a url' });
  t.equal(bad.status, 422, 'bad URL 422');
  t.equal(bad.body.errors[0].pointer, '/url');
  t.equal((await a.api.call('POST', '/v1/webhooks', { name: 'x', url: 'ftp://example.com/' })).status, 422, 'not http(s) 422');
  const creds = await a.api.call('POST', '/v1/webhooks', { name: 'x', url: 'https://user:pw@example.com/' });
  t.match(creds, { status: 422, body: { errors: [{ pointer: '/url', code: 'url_credentials' }] } }, 'no credentials in the URL (they would be logged and sent in clear)');

  // The stack's web does not allow private receivers: loopback and link-local are refused.
  const strict = mailApi(stack.url, a.headers);
  for (const url of ['http://127.0.0.1:9/x', 'http://localhost:9/x', 'http://169.254.169.254/latest', 'http://[::1]/x', 'http://10.1.2.3/']) {
    const r = await strict.call('POST', '/v1/webhooks', { name: 'p', url });
    t.equal(r.status, 422, `${url} refused at creation`);
  }

  // Another instance's webhook id on every route (404 webhook_not_found, no data): test/route-security.test.ts.

  await sleep(20);
  const patched = await a.api.call('PATCH', `/v1/webhooks/${first.body.id}`, { name: 'renamed', events: null });
  t.equal(patched.status, 200);
  t.equal(patched.body.name, 'renamed');
  t.equal(patched.body.events, null);
  t.ok(Date.parse(patched.body.updated_at) > Date.parse(first.body.updated_at), 'updated_at moves');
  t.equal((await a.api.call('PATCH', `/v1/webhooks/${first.body.id}`, {})).status, 422, 'empty patch 422');

  const rotated = await a.api.call('POST', `/v1/webhooks/${first.body.id}/rotate-secret`);
  t.equal(rotated.status, 200);
  t.equal(rotated.headers.get('cache-control'), 'no-store', 'nor the new one');
  t.not(rotated.body.secret, first.body.secret);
  t.ok(Math.abs(Date.parse(rotated.body.previous_secret_expires_at) - Date.now() - 24 * 3600_000) < 60_000, 'previous signs 24 h');
  const expired = await a.api.call('POST', `/v1/webhooks/${first.body.id}/rotate-secret`, { expire_previous: true });
  t.equal(expired.body.previous_secret_expires_at, null, 'expire_previous: none in force');

  t.equal((await a.api.call('DELETE', `/v1/webhooks/${second.body.id}`)).status, 204);
  t.equal((await a.api.call('GET', `/v1/webhooks/${second.body.id}`)).status, 404);
  const oa = await (await fetch(`${web.url}/v1/openapi.json`)).json();
  t.ok(oa.webhooks?.['mail.sent']?.post && oa.webhooks?.['webhook.test']?.post, 'OpenAPI 3.1 webhooks list the event types');
  t.ok(oa.paths['/v1/webhooks/{id}/replay']?.post, 'replay documented');
});

t.test('rotation end to end: inside the overlap a delivery carries two signatures, each verifying with its own secret; after it, one', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/rotation', ['webhook.test']);
  const testEvent = async () => {
    const before = receiver.at('/rotation').length;
    t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/test`)).status, 202);
    return waitFor('a test event at /rotation', async () => receiver.at('/rotation')[before], { ms: 20_000 });
  };
  const signatures = (r: Received) => r.headers['webhook-signature']!.split(' ');
  // standardwebhooks accepts a header when any of its signatures verifies: each is checked alone.
  const alone = (r: Received, signature: string): Received => ({ ...r, headers: { ...r.headers, 'webhook-signature': signature } });
  const old = h.secret;

  const before = await testEvent();
  t.equal(signatures(before).length, 1, 'before the rotation: one signature');
  t.ok(verifies(old, before));

  const rotated = await a.api.call('POST', `/v1/webhooks/${h.id}/rotate-secret`);
  t.equal(rotated.status, 200);
  const fresh = rotated.body.secret as string;
  const during = await testEvent();
  const [first, second] = signatures(during);
  t.equal(signatures(during).length, 2, 'inside the overlap: two signatures');
  t.ok(verifies(fresh, alone(during, first!)), 'the first verifies with the new secret');
  t.notOk(verifies(old, alone(during, first!)), 'and not with the previous one');
  t.ok(second !== undefined && verifies(old, alone(during, second)), 'the second verifies with the previous secret');
  t.ok(second === undefined || !verifies(fresh, alone(during, second)), 'and not with the new one');

  // The overlap ends: its expiry moved into the past, as a day later does (webhooks-crash moves
  // the worker's clock instead).
  await dbs.pool.query("UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [h.id]);
  t.equal((await a.api.call('GET', `/v1/webhooks/${h.id}`)).body.previous_secret_expires_at, null, 'no previous secret in force');
  const after = await testEvent();
  t.equal(signatures(after).length, 1, 'after the overlap: one signature');
  t.ok(verifies(fresh, after), 'the new secret verifies');
  t.notOk(verifies(old, after), 'the previous one no longer does');
});

t.test('a send produces its events in order per mail, signed; a bounce, an open, a click; filters hold', async (t) => {
  const a = await tenant();
  const all = await createHook(a, '/flow-all');
  const sentOnly = await createHook(a, '/flow-sent', ['mail.sent']);
  const r = await a.api.send({ from: a.from, to: [{ email: 'ok@example.org' }, { email: 'bounce@example.org' }], subject: 's', html: '<p>Hi <a href="https://shop.example/a">x</a></p>' });
  t.equal(r.status, 202);
  const [ok, bounced] = r.body.data ? r.body.data.map((m: any) => m.mail_id) : r.body.mails.map((m: any) => m.mail_id);
  await a.api.waitFinal(ok);
  await a.api.waitFinal(bounced);
  await fetch(`${web.url}/t/o/${openToken(secret, ok)}`);
  await fetch(`${web.url}/t/c/${clickToken(secret, ok, 'https://shop.example/a')}`, { redirect: 'manual' });
  const got = await waitFor('the flow', async () => {
    const rs = receiver.at('/flow-all').filter((x) => x.answered === 200);
    const ofOk = rs.filter((x) => x.event.data?.mail_id === ok);
    return ofOk.some((x) => x.event.type === 'mail.clicked') && rs.some((x) => x.event.type === 'mail.bounced') ? rs : undefined;
  });
  t.ok(got.every((x) => verifies(all.secret, x)), 'every delivery verifies with standardwebhooks');
  t.same(typesOf(got.filter((x) => x.event.data?.mail_id === ok)), ['mail.received', 'mail.queued', 'mail.sent', 'mail.opened', 'mail.clicked'], 'ok mail in order');
  t.same(typesOf(got.filter((x) => x.event.data?.mail_id === bounced)), ['mail.received', 'mail.queued', 'mail.bounced'], 'bounced mail in order');
  const b = got.find((x) => x.event.type === 'mail.bounced')!;
  t.match(b.event.data, { mail_id: bounced, recipient: 'bounce@example.org', status: 6, bounce_class: 'hard' });
  t.type(b.event.data.msg_id, 'string');
  t.match(b.headers['webhook-id'], /^msg_\d+$/);
  const sent = got.find((x) => x.event.type === 'mail.sent')!;
  t.match(sent.event, { type: 'mail.sent', data: { mail_id: ok, status: 3, smtp_code: 250 } });
  t.ok(Date.parse(sent.event.timestamp) > 0, 'timestamp');
  const click = got.find((x) => x.event.type === 'mail.clicked')!;
  t.equal(click.event.data.url, 'https://shop.example/a');
  // Each carries the event pump's judgment (fetched by Node right after delivery: a machine's).
  const open = got.find((x) => x.event.type === 'mail.opened')!;
  const judged = await dbs.pool.query<{ kind: string; machine: string | null }>(
    "SELECT kind, machine FROM event_outbox WHERE mail_id = $1 AND kind IN ('open', 'click') ORDER BY id", [ok]);
  t.strictSame(judged.rows.map((x) => x.kind), ['open', 'click']);
  t.equal(open.event.data.machine, judged.rows[0]!.machine, `mail.opened: machine ${open.event.data.machine}`);
  t.equal(click.event.data.machine, judged.rows[1]!.machine, `mail.clicked: machine ${click.event.data.machine}`);
  t.type(open.event.data.machine, 'string', 'an open fetched by a script is flagged');
  // The hard bounce restricted the address: restriction.created, from the same transaction.
  const restriction = await waitFor('restriction.created', async () => receiver.at('/flow-all').find((x) => x.event.type === 'restriction.created'));
  t.match(restriction.event.data, { recipient: 'bounce@example.org', reason: 'hard_bounce' });
  // Lifted in the panel (the CLI's domain function): restriction.lifted.
  await withTenant(dbs.pool, a.tenant, (c) => lift(a.tenant, c, 'bounce@example.org'));
  const lifted = await waitFor('restriction.lifted', async () => receiver.at('/flow-all').find((x) => x.event.type === 'restriction.lifted'));
  t.match(lifted.event.data, { restriction_id: restriction.event.data.restriction_id, recipient: 'bounce@example.org', reason: 'hard_bounce' });
  t.type(lifted.event.data.lifted_at, 'string');
  await delivered('/flow-sent', 1);
  await quiet(a.tenant.instanceId, sentOnly.id);
  t.same(typesOf(receiver.at('/flow-sent')), ['mail.sent'], 'the filtered webhook got only mail.sent');
});

t.test('500 three times then 200: one event, same webhook-id, four attempts in the log', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/retry');
  receiver.on('/retry', (_r, n) => (n <= 3 ? { status: 500, body: 'boom '.repeat(500) } : { status: 200 }));
  t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/test`)).status, 202);
  await delivered('/retry', 1);
  const rs = receiver.at('/retry');
  t.equal(rs.length, 4);
  t.equal(new Set(rs.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id across retries');
  t.ok(rs.every((r) => verifies(h.secret, r)));
  t.equal(rs[0]!.event.type, 'webhook.test');
  const log = await a.api.call('GET', `/v1/webhooks/${h.id}/deliveries`);
  t.same(log.body.data.map((x: any) => [x.attempt, x.status, x.status_code]), [[4, 'succeeded', 200], [3, 'failed', 500], [2, 'failed', 500], [1, 'failed', 500]], 'newest first');
  t.equal(log.body.data[1].response_body.length, 1024, 'first 1 KB of the answer');
  t.equal((await a.api.call('GET', `/v1/webhooks/${h.id}/deliveries?status=failed`)).body.data.length, 3, 'status filter');
  const w = (await a.api.call('GET', `/v1/webhooks/${h.id}`)).body;
  t.match(w, { last_status_code: 200, consecutive_failures: 0, failing_since: null, is_active: true });
  t.type(w.last_success_at, 'string');
  t.type(w.last_failure_at, 'string');
  // Redeliver one event now: the same webhook-id once more.
  const again = await a.api.call('POST', `/v1/webhooks/${h.id}/deliveries/${log.body.data[0].delivery_id}/retry`);
  t.equal(again.status, 202);
  const job = await dbs.pool.query(`SELECT extract(epoch FROM expire_in)::int AS s FROM pgboss.job WHERE name = 'webhook.deliver' AND data->>'delivery_id' = $1`, [
    String(again.body.delivery_id),
  ]);
  t.same(job.rows, [{ s: 15 + 10 }], "its job expires past the attempt's timeout (the web's WEBHOOK_TIMEOUT_SECONDS, 15), not the queue's 330 s");
  await delivered('/retry', 2);
  t.equal(receiver.at('/retry').at(-1)!.headers['webhook-id'], rs[0]!.headers['webhook-id']);
});

t.test('a burst: at most WEBHOOK_CONCURRENCY attempts in flight, each event delivered once and in order per mail, failures among successes retried', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/burst');
  let inFlight = 0;
  let most = 0;
  const failedOnce = new Set<string>();
  receiver.on('/burst', (r, n) => {
    most = Math.max(most, ++inFlight);
    setTimeout(() => inFlight--, 100); // before the answer's own timer: nothing new arrives in between
    // One first attempt in seven fails, so the worker's batches settle mixed answers.
    const id = r.headers['webhook-id']!;
    if (n % 7 === 0 && !failedOnce.has(id)) {
      failedOnce.add(id);
      return { status: 500, delayMs: 100 };
    }
    return { status: 200, delayMs: 100 };
  });
  const to = Array.from({ length: 40 }, (_, i) => ({ email: `reader${i}@example.org` }));
  const r = await a.api.send({ from: a.from, to, subject: 'burst', html: '<p>Hi</p>' });
  t.equal(r.status, 202);
  const ok = await delivered('/burst', 120, 60_000);
  t.equal(new Set(ok.map((x) => x.headers['webhook-id'])).size, 120, 'each of the 120 events answered 2xx once');
  t.ok(ok.every((x) => verifies(h.secret, x)));
  t.ok(most <= 10, `never more than WEBHOOK_CONCURRENCY (10) in flight: ${most}`);
  t.ok(most >= 2, `attempts run side by side: ${most}`);
  const mails = new Set(ok.map((x) => x.event.data.mail_id));
  t.equal(mails.size, 40);
  const outOfOrder = [...mails].filter((m) => typesOf(ok.filter((x) => x.event.data.mail_id === m)).join() !== 'mail.received,mail.queued,mail.sent');
  t.same(outOfOrder, [], 'every mail: received, queued, sent, in that order');
  t.ok(failedOnce.size > 0);
  const failed = await a.api.call('GET', `/v1/webhooks/${h.id}/deliveries?status=failed&page_size=100`);
  t.equal(failed.body.data.length, failedOnce.size, 'every failed attempt logged');
  const w = await waitFor('the last settle', async () => {
    const b = (await a.api.call('GET', `/v1/webhooks/${h.id}`)).body;
    return b.consecutive_failures === 0 ? b : undefined;
  });
  t.match(w, { is_active: true, last_status_code: 200, failing_since: null });
});

t.test('a slow answer holds only its own slot: the webhook\'s next delivery goes out meanwhile', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/one-slow');
  receiver.on('/one-slow', (_r, n) => (n === 1 ? 'hang' : { status: 200 }));
  t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/test`)).status, 202);
  await waitFor('the first request held', async () => (receiver.at('/one-slow').length ? true : undefined));
  t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/test`)).status, 202);
  await delivered('/one-slow', 1);
  const [slow, next] = receiver.at('/one-slow');
  t.equal(next!.answered, 200);
  t.ok(slow!.closedAt === undefined || next!.at < slow!.closedAt, 'delivered while the first was still waiting for its answer');
  await waitFor('the held one retried', async () => (receiver.at('/one-slow').filter((x) => x.answered === 200).length === 2 ? true : undefined));
});

t.test('a timeout is a failure with a null status code; 429 with Retry-After waits as told', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/slow');
  receiver.on('/slow', (_r, n) => (n === 1 ? 'hang' : { status: 200 }));
  await a.api.call('POST', `/v1/webhooks/${h.id}/test`);
  await delivered('/slow', 1);
  const log = (await a.api.call('GET', `/v1/webhooks/${h.id}/deliveries`)).body.data;
  t.match(log[1], { attempt: 1, status: 'failed', status_code: null, error: /timeout/ });
  receiver.releaseHeld();

  const l = await createHook(a, '/limited');
  receiver.on('/limited', (_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '3' } } : { status: 200 }));
  await a.api.call('POST', `/v1/webhooks/${l.id}/test`);
  await delivered('/limited', 1);
  const [r1, r2] = receiver.at('/limited');
  t.ok(r2!.at - r1!.at >= 2900, `waited Retry-After (${r2!.at - r1!.at} ms; the schedule says 1 s)`);

  // 503 with Retry-After as an HTTP date is honoured too; a 500's Retry-After is not (only 429 and 503 say "later").
  const u = await createHook(a, '/unavailable');
  const e = await createHook(a, '/erroring');
  receiver.on('/unavailable', (_r, n) => (n === 1 ? { status: 503, headers: { 'retry-after': new Date(Date.now() + 4000).toUTCString() } } : { status: 200 }));
  receiver.on('/erroring', (_r, n) => (n === 1 ? { status: 500, headers: { 'retry-after': '30' } } : { status: 200 }));
  await a.api.call('POST', `/v1/webhooks/${u.id}/test`);
  await a.api.call('POST', `/v1/webhooks/${e.id}/test`);
  await delivered('/unavailable', 1);
  await delivered('/erroring', 1);
  const [u1, u2] = receiver.at('/unavailable');
  t.ok(u2!.at - u1!.at >= 2000, `503: waited its Retry-After date (${u2!.at - u1!.at} ms; the schedule says 1 s)`);
  const [e1, e2] = receiver.at('/erroring');
  t.ok(e2!.at - e1!.at < 20_000, `500: the schedule's 1 s, not its Retry-After of 30 s (${e2!.at - e1!.at} ms)`);
});

t.test('410 Gone pauses at once', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/gone');
  receiver.on('/gone', () => ({ status: 410 }));
  await a.api.call('POST', `/v1/webhooks/${h.id}/test`);
  const w = await waitFor('paused', async () => {
    const r = (await a.api.call('GET', `/v1/webhooks/${h.id}`)).body;
    return r.is_active ? undefined : r;
  });
  t.equal(receiver.at('/gone').length, 1, 'no retry after a 410');
  t.match(w, { is_active: false, last_status_code: 410, consecutive_failures: 1 });
  t.type(w.auto_paused_at, 'string');
});

t.test('a receiver down long enough pauses the webhook; PATCH resumes it; replay delivers what it missed', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/down', ['webhook.test', 'mail.sent']);
  let up = false;
  receiver.on('/down', () => (up ? { status: 200 } : { status: 503 }));
  const since = new Date(Date.now() - 1000).toISOString();
  await a.api.call('POST', `/v1/webhooks/${h.id}/test`);
  const paused = await waitFor('paused', async () => {
    const r = (await a.api.call('GET', `/v1/webhooks/${h.id}`)).body;
    return r.is_active ? undefined : r;
  }, { ms: 30_000 });
  t.type(paused.auto_paused_at, 'string');
  t.type(paused.failing_since, 'string');
  t.ok(paused.consecutive_failures >= 3, `paused after ${paused.consecutive_failures} failures in a row (WEBHOOK_PAUSE_AFTER 4 s or WEBHOOK_PAUSE_AFTER_FAILURES 6, whichever came first)`);
  // While paused: a mail is sent; nothing reaches the receiver.
  const before = receiver.at('/down').length;
  const s = await a.api.send({ from: a.from, to: [{ email: 'ok@example.org' }], subject: 's', text: 'x' });
  const mailId = (s.body.data ?? s.body.mails)[0].mail_id;
  await a.api.waitFinal(mailId);
  await quiet(a.tenant.instanceId, h.id);
  t.equal(receiver.at('/down').length, before, 'nothing delivered while paused');
  t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/replay`, { since })).status, 409, 'replay refused while paused');

  up = true;
  const resumed = await a.api.call('PATCH', `/v1/webhooks/${h.id}`, { is_active: true });
  t.match(resumed.body, { is_active: true, auto_paused_at: null });
  const replay = await a.api.call('POST', `/v1/webhooks/${h.id}/replay`, { since });
  t.equal(replay.status, 202);
  t.equal(replay.body.queued, 1, 'mail.sent of the mail sent while paused (test events are not replayed)');
  const ok = await delivered('/down', 1);
  t.match(ok[0]!.event, { type: 'mail.sent', data: { mail_id: mailId } });
  t.ok(verifies(h.secret, ok[0]!));
});

t.test('PATCH is_active false cancels what is pending; retry and replay are 409 webhook_inactive until it is back', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/off', ['mail.sent']);
  receiver.on('/off', () => ({ status: 500 }));
  const s = await a.api.send({ from: a.from, to: [{ email: 'ok@example.org' }], subject: 's', text: 'x' });
  const mailId = (s.body.data ?? s.body.mails)[0].mail_id;
  await waitFor('a failed attempt', async () => (receiver.at('/off').length ? true : undefined));
  const off = await a.api.call('PATCH', `/v1/webhooks/${h.id}`, { is_active: false });
  t.equal(off.body.is_active, false);
  const log = await waitFor('the delivery cancelled', async () => {
    const data = (await a.api.call('GET', `/v1/webhooks/${h.id}/deliveries`)).body.data;
    return data.length && data.every((x: any) => x.delivery_status === 'cancelled') ? data : undefined;
  });
  const tried = receiver.at('/off').length;
  // The retry's job (due a second after the failed attempt) has run and found the delivery cancelled.
  await quiet(a.tenant.instanceId, h.id);
  t.equal(receiver.at('/off').length, tried, 'no attempt after the PATCH');
  const retry = await a.api.call('POST', `/v1/webhooks/${h.id}/deliveries/${log[0].delivery_id}/retry`);
  t.equal(retry.status, 409);
  t.equal(retry.body.code, 'webhook_inactive');
  const replay = await a.api.call('POST', `/v1/webhooks/${h.id}/replay`, { since: new Date(Date.now() - 60_000).toISOString() });
  t.same([replay.status, replay.body.code], [409, 'webhook_inactive']);
  receiver.on('/off', () => ({ status: 200 }));
  t.equal((await a.api.call('PATCH', `/v1/webhooks/${h.id}`, { is_active: true })).status, 200);
  t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/deliveries/${log[0].delivery_id}/retry`)).status, 202);
  const ok = await delivered('/off', 1);
  t.match(ok[0]!.event, { type: 'mail.sent', data: { mail_id: mailId } });
});

t.test('delivery refuses a private receiver when not allowed, on the address it connects to', async (t) => {
  for (const url of [receiver.url('/private'), receiver.url('/private').replace('127.0.0.1', 'localhost')]) {
    const o = await postEvent({ url, headers: {}, body: '{}', timeoutMs: 2000, receivers: receiverPolicy(loadConfig({})) });
    t.equal(o.statusCode, null, url);
    t.match(o.error, /receiver refused/);
  }
  t.equal(receiver.at('/private').length, 0, 'nothing reached the receiver');
  const allowed = await postEvent({ url: receiver.url('/private'), headers: {}, body: '{}', timeoutMs: 2000, receivers: receiverPolicy(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' })) });
  t.equal(allowed.statusCode, 200);
});

t.test('creation refuses every address that is not global unicast, the IPv6 forms that carry a private IPv4 included (422 url_not_public)', async (t) => {
  const a = await tenant();
  const strict = mailApi(stack.url, a.headers);
  const refused = [
    '[::7f00:1]', '[::ffff:0:7f00:1]', '[64:ff9b:1::1]', '[64:ff9b:1::808:808]', '[2002::1]', '[2002:7f00:1::]', '[2002:a9fe:a9fe::1]',
    '[fec0::1]', '[2001::1]', '[::ffff:7f00:1]', '[64:ff9b::a9fe:a9fe]', '[fd00::1]', '[100::1]',
  ];
  for (const host of refused) {
    const r = await strict.call('POST', '/v1/webhooks', { name: 'p', url: `http://${host}:8080/hook` });
    t.match(r, { status: 422, body: { errors: [{ pointer: '/url', code: 'url_not_public', message: /not public/ }] } }, `${host} refused`);
  }
  // The decoding works both ways: 8.8.8.8 inside 6to4 is public.
  t.equal((await strict.call('POST', '/v1/webhooks', { name: 'p', url: 'http://[2002:808:808::1]:8080/hook' })).status, 201, '2002:808:808::1 (8.8.8.8) accepted');
});

t.test("the service's own listeners: refused at creation and url change with private receivers allowed, and at delivery, storing nothing", async (t) => {
  const a = await tenant();
  const ch = new URL(dbs.clickhouseUrl);
  const pg = new URL(dbs.databaseUrl);
  const smtpPort = new URL(stack.simulator.url).port;
  const own = [
    `http://127.0.0.1:${ch.port}/?query=SELECT%201`,
    `http://localhost:${ch.port}/?query=SELECT%201`,
    `http://[::1]:${ch.port}/`,
    `http://[::ffff:127.0.0.1]:${ch.port}/`,
    `http://0.0.0.0:${ch.port}/`,
    `http://${pg.hostname}:${pg.port || 5432}/`,
    `http://127.0.0.1:${smtpPort}/`,
  ];
  for (const url of own) {
    const r = await a.api.call('POST', '/v1/webhooks', { name: 'own', url });
    t.match(r, { status: 422, body: { errors: [{ pointer: '/url', code: 'url_not_public', message: /one of the service's own listeners/ }] } }, `${url} refused at creation`);
  }
  const h = await createHook(a, '/own-later');
  const patched = await a.api.call('PATCH', `/v1/webhooks/${h.id}`, { url: own[0] });
  t.match(patched, { status: 422, body: { errors: [{ code: 'url_not_public' }] } }, 'refused on url change');
  t.equal((await a.api.call('GET', `/v1/webhooks/${h.id}`)).body.url, receiver.url('/own-later'), 'the url is unchanged');

  // A webhook that points there anyway (written before this check existed): the worker refuses
  // the connection on the address it resolves, a name resolving to loopback with ClickHouse's port.
  await dbs.pool.query('UPDATE webhooks SET url = $1 WHERE id = $2', [`http://localhost:${ch.port}/?query=SELECT%20version()`, h.id]);
  t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/test`)).status, 202);
  const first = await waitFor('the first attempt settled', async () => {
    const data = (await a.api.call('GET', `/v1/webhooks/${h.id}/deliveries`)).body.data;
    return data.find((x: any) => x.attempt === 1 && x.status !== 'pending');
  });
  t.match(first, { status: 'failed', status_code: null, response_body: null, error: /receiver refused: .*one of the service's own listeners/ }, 'refused, no answer stored');
  await a.api.call('PATCH', `/v1/webhooks/${h.id}`, { is_active: false });
});

t.test('a settle never fails on what a receiver answers: each delivery settles once, its stored answer a clean excerpt of at most 1 KB', async (t) => {
  const a = await tenant();
  const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37 + (i >> 3)) & 0xff));
  const cases: Array<{ path: string; answer: Parameters<typeof receiver.on>[1]; status?: number; expect: (body: string) => void }> = [
    { path: '/answer-nul', answer: () => ({ status: 200, body: 'before\0after' }), expect: (b) => t.equal(b, 'before\uFFFDafter', 'NUL replaced') },
    {
      path: '/answer-latin1',
      answer: () => ({ status: 200, headers: { 'content-type': 'text/plain; charset=iso-8859-1' }, body: Buffer.from('café ñ', 'latin1') }),
      expect: (b) => t.equal(b, 'caf\uFFFD \uFFFD', 'invalid UTF-8 replaced'),
    },
    {
      path: '/answer-binary',
      answer: () => ({ status: 200, headers: { 'content-type': 'application/octet-stream' }, body: binary }),
      expect: (b) => {
        t.ok(Buffer.byteLength(b) <= 1024, `binary: at most 1 KB (${Buffer.byteLength(b)} bytes)`);
        t.notOk(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(b), 'binary: no control character');
        t.ok(b.includes('\uFFFD'), 'binary: invalid bytes replaced');
      },
    },
    {
      // 5 MB whose 1,024th byte is inside a two-byte character.
      path: '/answer-huge',
      answer: () => ({ status: 200, body: Buffer.from('a' + 'é'.repeat(2_621_440)) }),
      expect: (b) => t.equal(b, 'a' + 'é'.repeat(511), '5 MB: the first 1 KB, the character the limit cuts dropped'),
    },
    {
      // Headers at once, then a few bytes every 100 ms for three times the timeout (1 s).
      path: '/answer-trickle',
      answer: () => ({ status: 200, trickle: { chunk: 'tick ', everyMs: 100, forMs: 3000 } }),
      expect: (b) => t.match(b, /^(tick )+$/, `a trickle: what came before the timeout (${b.length} characters)`),
    },
    {
      path: '/answer-retry-after',
      answer: (_r, n) => (n === 1 ? { status: 503, headers: { 'retry-after': '9'.repeat(40) }, body: '\0\x01' } : { status: 200 }),
      status: 503,
      expect: (b) => t.equal(b, '\uFFFD\uFFFD', 'a 503 with an absurd Retry-After and controls in its body'),
    },
  ];
  const hooks = new Map<string, number>();
  for (const c of cases) {
    receiver.on(c.path, c.answer);
    const h = await createHook(a, c.path);
    hooks.set(c.path, h.id);
    t.equal((await a.api.call('POST', `/v1/webhooks/${h.id}/test`)).status, 202);
  }
  for (const c of cases) {
    const id = hooks.get(c.path)!;
    const log = await waitFor(`${c.path} settled`, async () => {
      const data = (await a.api.call('GET', `/v1/webhooks/${id}/deliveries`)).body.data;
      return data.length && data.every((x: any) => x.status !== 'pending') && (c.status || data[0].delivery_status === 'succeeded') ? data : undefined;
    }, { ms: 20_000 });
    t.same(log.map((x: any) => [x.attempt, x.status, x.status_code]), [[1, c.status ? 'failed' : 'succeeded', c.status ?? 200]], `${c.path}: one attempt`);
    t.equal(log[0].error, null);
    c.expect(log[0].response_body);
  }
  // Every job of these deliveries has run (a retry wrongly enqueued by a settle included); only
  // the Retry-After of a day is left waiting.
  for (const id of hooks.values()) await quiet(a.tenant.instanceId, id, 3600);
  for (const c of cases) {
    const id = hooks.get(c.path)!;
    t.equal(receiver.at(c.path).length, 1, `${c.path}: sent once`);
    const log = (await a.api.call('GET', `/v1/webhooks/${id}/deliveries`)).body.data;
    t.equal(log.length, 1, `${c.path}: one attempt in the log`);
  }
  const retried = await dbs.pool.query("SELECT status, next_attempt_at > now() + interval '23 hours' AS in_a_day FROM webhook_deliveries WHERE webhook_id = $1", [hooks.get('/answer-retry-after')]);
  t.same(retried.rows, [{ status: 'pending', in_a_day: true }], 'Retry-After capped at a day');
});

/**
 * `n` events of a webhook and their deliveries as the fan-out writes them, three minutes old, with
 * no job (as if pg-boss had given up on them, or a worker holding them had crashed); `spilled`:
 * as a drain leaves those it let go past WEBHOOK_HOLD_MAX.
 */
async function jobless(instanceId: number, hookId: number, n: number, spilled = false) {
  const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { webhook_id: hookId } });
  const { rows } = await dbs.pool.query<{ id: number; event_id: number }>(
    `WITH o AS (INSERT INTO event_outbox (instance_id, kind, entity_id, webhooks_done)
                SELECT $1, 'webhook.test', $2, true FROM generate_series(1, $4::int) RETURNING id),
          e AS (INSERT INTO webhook_events (id, instance_id, type, webhook_id, occurred_at, body)
                SELECT id, $1, 'webhook.test', $2, now(), $3 FROM o RETURNING id)
     INSERT INTO webhook_deliveries (instance_id, webhook_id, event_id, created_at, spilled)
     SELECT $1, $2, id, now() - interval '3 minutes', $5 FROM e ORDER BY id
     RETURNING id, event_id`,
    [instanceId, hookId, body, n, spilled],
  );
  return rows;
}

/** Jobs of the delivery queue, waiting, running or done, for these deliveries. */
async function jobsFor(rows: Array<{ id: number }>): Promise<number> {
  const { rows: n } = await dbs.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook.deliver' AND (data->>'delivery_id')::bigint = ANY($1::bigint[])`,
    [rows.map((r) => r.id)],
  );
  return n[0]!.n;
}

async function withBoss<R>(fn: (boss: ReturnType<typeof createBoss>) => Promise<R>): Promise<R> {
  const boss = createBoss(dbs.databaseUrl, { supervise: false, schedule: false });
  await boss.start();
  try {
    return await fn(boss);
  } finally {
    await boss.stop({ graceful: false, wait: false });
  }
}

const sweep = () =>
  withBoss((boss) => webhookSweepJob.handle({}, { boss, pool: dbs.pool, config: loadConfig({ DATABASE_URL: dbs.databaseUrl, ...WEBHOOK_ENV }) } as any));

t.test('the minute sweep gives a job back to a pending delivery whose job was lost', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/swept');
  const [lost] = await jobless(a.tenant.instanceId, h.id, 1);
  // A later event, for another webhook of the instance, has gone out: the worker is delivering.
  const witness = await createHook(a, '/swept-witness');
  t.equal((await a.api.call('POST', `/v1/webhooks/${witness.id}/test`)).status, 202);
  await delivered('/swept-witness', 1);
  t.equal(receiver.at('/swept').length, 0, 'nothing without a job');
  await sweep();
  const [r] = await delivered('/swept', 1);
  t.equal(r!.headers['webhook-id'], `msg_${lost!.event_id}`);
  t.ok(verifies(h.secret, r!));
});

t.test('the sweep pages past a thousand deliveries whose jobs are waiting to the lost ones behind them', async (t) => {
  const a = await tenant();
  const waiting = await createHook(a, '/waiting');
  const lost = await createHook(a, '/paged');
  // 1,000 deliveries for one webhook whose jobs are waiting (due in an hour: a backlog, not a
  // loss), then 5 for another webhook with no job at all. A sweep that read only the first 1,000
  // due deliveries would find nothing.
  const backlog = await jobless(a.tenant.instanceId, waiting.id, 1000);
  const orphans = await jobless(a.tenant.instanceId, lost.id, 5);
  const inAnHour = new Date(Date.now() + 3_600_000);
  await withBoss((boss) => boss.insert(backlog.map((r) => ({ name: 'webhook.deliver', data: { delivery_id: r.id }, startAfter: inAnHour }))));
  await sweep();
  const got = await delivered('/paged', 5);
  t.same(got.map((r) => r.headers['webhook-id']).sort(), orphans.map((r) => `msg_${r.event_id}`).sort(), 'the 5 lost deliveries got jobs and went out');
  t.equal(await jobsFor(backlog), 1000, 'no second job for a delivery whose job is waiting');
  t.equal(receiver.at('/waiting').length, 0, 'the backlog waits for its jobs');
});

t.test('deliveries a drain let go (spilled) get one job per webhook from the sweep, and that drain takes them all back', async (t) => {
  const a = await tenant();
  const h = await createHook(a, '/spilled');
  // As a worker that let them go past WEBHOOK_HOLD_MAX and then stopped leaves them: marked, no job.
  const marked = await jobless(a.tenant.instanceId, h.id, 1200, true);
  await sweep();
  t.equal(await jobsFor(marked), 1, 'one job, not one per marked delivery');
  const got = await delivered('/spilled', 1200);
  t.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1200, 'every marked delivery went out');
  const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND spilled', [h.id]);
  t.equal(rows[0].n, 0, 'none left marked');
});
