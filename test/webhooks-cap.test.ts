import t from 'tap';
import { makeTenant } from './helpers/fixtures.js';
import { mailApi } from './helpers/send-stack.js';
import { testDatabases } from './helpers/databases.js';
import { startTestWeb } from './helpers/web.js';

/**
 * WEBHOOK_MAX_PER_INSTANCE (docs/webhooks.md, Limits) over HTTP: set to 3 here. Creating up to it
 * works, one more is 409 webhook_limit_reached, a paused webhook still counts, a delete frees a
 * place, another instance has its own count; and creates racing at max - 1 on two web dynos (two
 * apps, two pools) give exactly one webhook.
 */
const MAX = 3;
const dbs = await testDatabases(t, 'webhookcap');
const env = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_MAX_PER_INSTANCE: String(MAX) };
const web = await startTestWeb(t, dbs, { env });
const web2 = await startTestWeb(t, dbs, { env });
const SCOPES = ['webhooks:read', 'webhooks:write'];
const body = (name: string) => ({ name, url: `http://127.0.0.1:9/${name}` });

t.test('up to the cap, then 409 webhook_limit_reached; paused ones count; a delete frees a place', async (t) => {
  const a = await makeTenant(dbs.pool, { scopes: SCOPES });
  const api = mailApi(web.url, a.headers);
  const made: number[] = [];
  for (let i = 0; i < MAX; i++) {
    const r = await api.call('POST', '/v1/webhooks', body(`h${i}`));
    t.equal(r.status, 201, `webhook ${i + 1} of ${MAX} created`);
    made.push(r.body.id);
  }
  const over = await api.call('POST', '/v1/webhooks', body('over'));
  t.equal(over.status, 409, 'one more: 409');
  t.equal(over.body.code, 'webhook_limit_reached', 'the code names the rule');
  t.match(over.body.detail, /at most 3/, 'detail says the cap');
  t.match(over.body.detail, /WEBHOOK_MAX_PER_INSTANCE/, 'and how to raise it');
  t.equal((await api.call('GET', '/v1/webhooks')).body.data.length, MAX, 'nothing created by the refusal');

  t.equal((await api.call('PATCH', `/v1/webhooks/${made[0]}`, { is_active: false })).status, 200);
  t.equal((await api.call('POST', '/v1/webhooks', body('paused-counts'))).body.code, 'webhook_limit_reached', 'a paused webhook still counts');

  const other = await makeTenant(dbs.pool, { scopes: SCOPES });
  t.equal((await mailApi(web.url, other.headers).call('POST', '/v1/webhooks', body('other'))).status, 201, 'another instance has its own count');

  t.equal((await api.call('DELETE', `/v1/webhooks/${made[1]}`)).status, 204);
  t.equal((await api.call('POST', '/v1/webhooks', body('after-delete'))).status, 201, 'a delete frees a place');
  t.equal((await api.call('POST', '/v1/webhooks', body('full-again'))).status, 409, 'and the cap holds again');

  const oa = await (await fetch(`${web.url}/v1/openapi.json`)).json();
  const create = oa.paths['/v1/webhooks'].post;
  t.ok(create.responses['409'], 'OpenAPI: POST /v1/webhooks declares 409');
  t.match(create.description, /409 webhook_limit_reached/, 'and names the code');
});

t.test('creates racing at max - 1 on two web dynos: exactly one succeeds', async (t) => {
  for (let round = 0; round < 5; round++) {
    const a = await makeTenant(dbs.pool, { scopes: SCOPES });
    const apis = [mailApi(web.url, a.headers), mailApi(web2.url, a.headers)];
    for (let i = 0; i < MAX - 1; i++) t.equal((await apis[0]!.call('POST', '/v1/webhooks', body(`r${i}`))).status, 201);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => apis[i % 2]!.call('POST', '/v1/webhooks', body(`race${i}`))));
    const statuses = results.map((r) => r.status).sort();
    t.same(statuses, [201, 409, 409, 409, 409, 409, 409, 409], `round ${round}: one 201, the rest 409`);
    t.ok(results.filter((r) => r.status === 409).every((r) => r.body.code === 'webhook_limit_reached'));
    const count = await dbs.pool.query('SELECT count(*)::int AS n FROM webhooks WHERE instance_id = $1', [a.tenant.instanceId]);
    t.equal(count.rows[0].n, MAX, `round ${round}: the instance has exactly ${MAX}`);
  }
});
