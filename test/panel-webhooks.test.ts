import t from 'tap';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { panelCast } from './helpers/panel.js';
import { startSendStack, waitFor } from './helpers/send-stack.js';
import { startReceiver, verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * The webhooks of the panel's /v1/private API (issue 31, docs/panel.md "Webhooks"): the public
 * /v1/webhooks routes mirrored behind a member's session. Against the real web app, Postgres, a
 * worker dyno as its own process and a real receiver on loopback that checks every signature with
 * the official standardwebhooks library: what each role may do, the secret shown once (creation,
 * rotation) and the 24-hour overlap of the previous one, the test event arriving and listed in the
 * deliveries, a retry and a replay arriving again, pause and resume, another instance's ids 404.
 */

const stack = await startSendStack(t, { label: 'panelhooks', publicUrl: 'https://links.panelhooks.test', webEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
const { dbs, url } = stack;
// Receivers on loopback: allowed by both dynos, as `npm start` allows them.
stack.spawnWorker({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_SECONDS: '2' });
const receiver = await startReceiver(t);

const a = await makeTenant(dbs.pool, { scopes: ['webhooks:read'] });
const b = await makeTenant(dbs.pool);
const { owner, admin, viewer, ownerOfB, call } = await panelCast(url, dbs.pool, a, b);

/** The requests at `path` answered 2xx, once there are `n`. */
const arrived = (path: string, n: number) =>
  waitFor(`${n} deliveries at ${path}`, async () => {
    const ok = receiver.at(path).filter((r) => r.answered !== undefined && r.answered < 300);
    return ok.length >= n ? ok : undefined;
  }, { ms: 30_000 });
const ids = (rs: Received[]) => rs.map((r) => r.headers['webhook-id']);

t.test('roles: any member reads, an admin or owner changes, a viewer is refused; the secret only at creation', async (t) => {
  t.equal((await call(viewer, 'GET', '/v1/private/webhooks')).status, 200, 'a viewer lists');
  const refused = await call(viewer, 'POST', '/v1/private/webhooks', { name: 'no', url: receiver.url('/no') });
  t.equal(refused.status, 403, 'a viewer cannot create');
  t.equal(refused.body.code, 'forbidden');

  const created = await call(admin, 'POST', '/v1/private/webhooks', { name: 'Orders', url: receiver.url('/roles'), events: ['restriction.created'] });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.match(created.body.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'the signing secret, in the creation answer');
  t.equal(created.headers.get('cache-control'), 'no-store', 'kept by no cache');
  t.same(created.body.events, ['restriction.created']);
  const id = created.body.id as number;

  const listed = await call(viewer, 'GET', '/v1/private/webhooks');
  t.same(listed.body.data.map((w: { id: number }) => w.id), [id]);
  const one = await call(viewer, 'GET', `/v1/private/webhooks/${id}`);
  t.equal(one.status, 200);
  t.notOk('secret' in one.body, 'never the secret again');
  t.notOk(JSON.stringify(listed.body).includes(created.body.secret), 'not in the list either');
  const viaKey = await jsonCall(url, 'GET', `/v1/webhooks/${id}`, undefined, a.headers);
  t.same(viaKey.body, one.body, 'the panel reads exactly what the public API reads');

  t.equal((await call(viewer, 'PATCH', `/v1/private/webhooks/${id}`, { is_active: false })).status, 403, 'a viewer cannot pause');
  t.equal((await call(viewer, 'POST', `/v1/private/webhooks/${id}/rotate-secret`)).status, 403, 'nor rotate');
  t.equal((await call(viewer, 'POST', `/v1/private/webhooks/${id}/test`)).status, 403, 'nor test');
  t.equal((await call(viewer, 'DELETE', `/v1/private/webhooks/${id}`)).status, 403, 'nor delete');
  const edited = await call(owner, 'PATCH', `/v1/private/webhooks/${id}`, { name: 'Orders (EU)', events: null });
  t.equal(edited.status, 200, 'an owner edits');
  t.match(edited.body, { name: 'Orders (EU)', events: null });
  const invalid = await call(admin, 'POST', '/v1/private/webhooks', { name: 'x', url: 'ftp://example.com/' });
  t.equal(invalid.status, 422, "the public route's validation");
  t.equal(invalid.body.errors[0].pointer, '/url');

  t.equal((await call(admin, 'DELETE', `/v1/private/webhooks/${id}`)).status, 204, 'an admin deletes');
  t.equal((await call(viewer, 'GET', `/v1/private/webhooks/${id}`)).body.code, 'webhook_not_found', 'gone');
});

t.test('the test event arrives, signed, and is listed in the deliveries; a retry arrives again', async (t) => {
  const created = await call(admin, 'POST', '/v1/private/webhooks', { name: 'Test', url: receiver.url('/test') });
  const { id, secret } = created.body as { id: number; secret: string };
  const queued = await call(admin, 'POST', `/v1/private/webhooks/${id}/test`);
  t.equal(queued.status, 202);
  t.equal(queued.body.type, 'webhook.test');
  const [first] = await arrived('/test', 1);
  t.equal(first!.event.type, 'webhook.test');
  t.equal(first!.headers['webhook-id'], `msg_${queued.body.event_id}`, 'the event the answer named');
  t.ok(verifies(secret, first!), 'signed with the secret shown at creation');

  const attempts = await waitFor('the attempt listed as succeeded', async () => {
    const r = await call(viewer, 'GET', `/v1/private/webhooks/${id}/deliveries`);
    return r.body.data.some((x: { status: string }) => x.status === 'succeeded') ? r.body.data : undefined;
  });
  t.match(attempts[0], { event_type: 'webhook.test', event_id: `msg_${queued.body.event_id}`, attempt: 1, status: 'succeeded', status_code: 200, response_body: 'ok', delivery_status: 'succeeded' });
  t.type(attempts[0].duration_ms, 'number', 'its timing');

  const retried = await call(admin, 'POST', `/v1/private/webhooks/${id}/deliveries/${attempts[0].delivery_id}/retry`);
  t.equal(retried.status, 202, JSON.stringify(retried.body));
  t.not(retried.body.delivery_id, attempts[0].delivery_id, 'a new delivery');
  const both = await arrived('/test', 2);
  t.same(ids(both), [first!.headers['webhook-id'], first!.headers['webhook-id']], 'the same event again (same webhook-id)');
  t.equal((await call(viewer, 'POST', `/v1/private/webhooks/${id}/deliveries/${attempts[0].delivery_id}/retry`)).status, 403, 'a viewer cannot retry');
});

t.test('rotation: a new secret shown once, the previous one signing beside it for 24 hours, or not at all', async (t) => {
  const created = await call(admin, 'POST', '/v1/private/webhooks', { name: 'Rotate', url: receiver.url('/rotate') });
  const { id, secret: before } = created.body as { id: number; secret: string };
  const rotated = await call(admin, 'POST', `/v1/private/webhooks/${id}/rotate-secret`);
  t.equal(rotated.status, 200);
  t.equal(rotated.headers.get('cache-control'), 'no-store');
  t.not(rotated.body.secret, before, 'a new secret');
  const overlap = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
  t.ok(overlap > 23.9 * 3_600_000 && overlap <= 24 * 3_600_000, `the previous one expires in 24 hours (${overlap} ms)`);
  await call(admin, 'POST', `/v1/private/webhooks/${id}/test`);
  const [got] = await arrived('/rotate', 1);
  t.equal(got!.headers['webhook-signature']!.split(' ').length, 2, 'two signatures during the overlap');
  t.ok(verifies(rotated.body.secret, got!), 'the new secret verifies');
  t.ok(verifies(before, got!), 'and so does the previous one, for now');

  const again = await call(admin, 'POST', `/v1/private/webhooks/${id}/rotate-secret`, { expire_previous: true });
  t.equal(again.body.previous_secret_expires_at, null, 'expire_previous: no overlap');
  await call(admin, 'POST', `/v1/private/webhooks/${id}/test`);
  const [, last] = await arrived('/rotate', 2);
  t.ok(verifies(again.body.secret, last!), 'the newest secret verifies');
  t.notOk(verifies(rotated.body.secret, last!), 'the one it replaced no longer does');
});

t.test('pause, replay refused while paused, resume, replay a range: the events arrive again', async (t) => {
  const created = await call(admin, 'POST', '/v1/private/webhooks', { name: 'Replay', url: receiver.url('/replay'), events: ['restriction.created'] });
  const id = created.body.id as number;
  const since = new Date(Date.now() - 1_000).toISOString();
  const restricted = await call(admin, 'POST', '/v1/private/restrictions', { recipient: 'replayed@example.org' });
  t.equal(restricted.status, 201);
  const [original] = await arrived('/replay', 1);
  t.equal(original!.event.type, 'restriction.created');

  const paused = await call(admin, 'PATCH', `/v1/private/webhooks/${id}`, { is_active: false });
  t.equal(paused.body.is_active, false, 'paused');
  const refused = await call(admin, 'POST', `/v1/private/webhooks/${id}/replay`, { since });
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 'webhook_inactive', 'a paused webhook replays nothing');
  t.equal((await call(viewer, 'POST', `/v1/private/webhooks/${id}/replay`, { since })).status, 403, 'a viewer cannot replay');
  const resumed = await call(admin, 'PATCH', `/v1/private/webhooks/${id}`, { is_active: true });
  t.equal(resumed.body.is_active, true, 'resumed');

  const replayed = await call(admin, 'POST', `/v1/private/webhooks/${id}/replay`, { since, until: new Date().toISOString() });
  t.equal(replayed.status, 202);
  t.equal(replayed.body.queued, 1, 'the one event of the range');
  const both = await arrived('/replay', 2);
  t.same(ids(both), [original!.headers['webhook-id'], original!.headers['webhook-id']], 'the same event again');
  const empty = await call(admin, 'POST', `/v1/private/webhooks/${id}/replay`, { since: new Date(Date.now() + 60_000).toISOString() });
  t.equal(empty.body.queued, 0, 'an empty range queues nothing');
});

t.test("another instance's webhook is a 404, and its deliveries too", async (t) => {
  const mine = (await call(admin, 'POST', '/v1/private/webhooks', { name: 'Mine', url: receiver.url('/mine') })).body.id as number;
  await call(admin, 'POST', `/v1/private/webhooks/${mine}/test`);
  await arrived('/mine', 1);
  const deliveryId = (await call(admin, 'GET', `/v1/private/webhooks/${mine}/deliveries`)).body.data[0].delivery_id as number;
  for (const [method, path, body] of [
    ['GET', `/v1/private/webhooks/${mine}`],
    ['PATCH', `/v1/private/webhooks/${mine}`, { name: 'theirs' }],
    ['GET', `/v1/private/webhooks/${mine}/deliveries`],
    ['POST', `/v1/private/webhooks/${mine}/test`],
    ['POST', `/v1/private/webhooks/${mine}/rotate-secret`],
    ['POST', `/v1/private/webhooks/${mine}/deliveries/${deliveryId}/retry`],
    ['POST', `/v1/private/webhooks/${mine}/replay`, { since: new Date(0).toISOString() }],
    ['DELETE', `/v1/private/webhooks/${mine}`],
  ] as const) {
    const r = await call(ownerOfB, method, path, body, b.slug);
    t.equal(r.status, 404, `${method} ${path} as B's owner`);
    t.equal(r.body.code, 'webhook_not_found');
  }
  const theirs = (await call(ownerOfB, 'POST', '/v1/private/webhooks', { name: 'Theirs', url: receiver.url('/theirs') }, b.slug)).body.id as number;
  const crossed = await call(admin, 'POST', `/v1/private/webhooks/${theirs}/deliveries/${deliveryId}/retry`);
  t.equal(crossed.body.code, 'webhook_not_found', "B's webhook with A's delivery");
  await call(ownerOfB, 'POST', `/v1/private/webhooks/${theirs}/test`, undefined, b.slug);
  await arrived('/theirs', 1);
  const theirDelivery = (await call(ownerOfB, 'GET', `/v1/private/webhooks/${theirs}/deliveries`, undefined, b.slug)).body.data[0].delivery_id as number;
  const foreignDelivery = await call(admin, 'POST', `/v1/private/webhooks/${mine}/deliveries/${theirDelivery}/retry`);
  t.equal(foreignDelivery.status, 404, "A's webhook with B's delivery");
  t.equal(foreignDelivery.body.code, 'webhook_delivery_not_found');
  t.equal(receiver.at('/theirs').length, 1, "B's event was not sent again");
  t.equal((await call(ownerOfB, 'GET', '/v1/private/webhooks', undefined, b.slug)).body.data.length, 1, "B lists only its own");
  t.equal(receiver.at('/mine').length, 1, 'nothing more was sent to A’s receiver');
});
