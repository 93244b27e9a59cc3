// /readyz and /metrics are the operator's (api/internal.ts): served on the internal listener
// (INTERNAL_PORT, loopback by default), and on the public port only to a bearer of
// INTERNAL_TOKEN. /healthz stays public: routers probe it.
import t from 'tap';
import { loadConfig } from '../config/config.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

const TOKEN = 'x'.repeat(24) + 'internal-token-for-tests';
const dbs = await testDatabases(t, 'internal');
const a = await makeTenant(dbs.pool);
const plain = await startTestWeb(t, dbs);
const withToken = await startTestWeb(t, dbs, { env: { INTERNAL_TOKEN: TOKEN } });
const noInternal = await startTestWeb(t, dbs, { env: { INTERNAL_PORT: '' } });

async function get(url: string, headers: Record<string, string> = {}) {
  const r = await fetch(url, { headers });
  return { status: r.status, type: r.headers.get('content-type') ?? '', auth: r.headers.get('www-authenticate'), text: await r.text() };
}

t.test('public port, no INTERNAL_TOKEN: /readyz and /metrics are unknown paths; /healthz answers', async (t) => {
  for (const web of [plain, noInternal]) {
    for (const path of ['/readyz', '/metrics']) {
      const r = await get(web.url + path);
      t.equal(r.status, 404, `${path}: 404`);
      t.match(JSON.parse(r.text), { code: 'not_found' }, `${path}: the API's problem object`);
      t.notMatch(r.text, /cartero_http_request_duration_seconds|postgres/, `${path}: nothing of it leaks`);
    }
    t.equal((await get(web.url + '/healthz')).status, 200, '/healthz stays public');
  }
  t.equal(noInternal.internalUrl, undefined, 'INTERNAL_PORT unset: no internal listener');
});

t.test('the internal listener: loopback, the three endpoints, and nothing of the API', async (t) => {
  const base = plain.internalUrl!;
  t.match(base, /^http:\/\/127\.0\.0\.1:\d+$/, 'on 127.0.0.1 by default');
  const ready = await get(`${base}/readyz`);
  t.equal(ready.status, 200);
  t.match(JSON.parse(ready.text), { status: 'ready' });
  await get(`${plain.url}/v1/senders`, a.headers);
  const metrics = await get(`${base}/metrics`);
  t.equal(metrics.status, 200);
  t.match(metrics.type, /^text\/plain/);
  t.match(metrics.text, /cartero_http_request_duration_seconds_count\{method="GET",route="\/v1\/senders",status="200"\}/, 'the public port\'s traffic');
  t.equal((await get(`${base}/healthz`)).status, 200);
  t.equal((await get(`${base}/v1/senders`, a.headers)).status, 404, 'no API on the internal port');
});

t.test('public port with INTERNAL_TOKEN: served to its bearer only', async (t) => {
  for (const path of ['/readyz', '/metrics']) {
    for (const [label, headers] of [
      ['no credentials', {}],
      ['a wrong token', { authorization: `Bearer ${TOKEN}x` }],
      ['a prefix of it', { authorization: `Bearer ${TOKEN.slice(0, 20)}` }],
      ['an API key', a.headers],
    ] as const) {
      const r = await get(withToken.url + path, headers);
      t.equal(r.status, 401, `${path}, ${label}: 401`);
      t.equal(r.auth, 'Bearer', `${path}, ${label}: WWW-Authenticate: Bearer`);
    }
    t.equal((await get(withToken.url + path, { authorization: `Bearer ${TOKEN}` })).status, 200, `${path} with the token`);
  }
  t.equal((await get(withToken.url + '/healthz')).status, 200, '/healthz needs no token');
});

t.test('config', async (t) => {
  const c = loadConfig({});
  t.equal(c.internalPort, undefined);
  t.equal(c.internalHost, '127.0.0.1');
  t.equal(c.internalToken, undefined);
  t.equal(loadConfig({ INTERNAL_PORT: '9100', INTERNAL_HOST: '0.0.0.0' }).internalPort, 9100);
  t.throws(() => loadConfig({ INTERNAL_TOKEN: 'short' }), { message: /INTERNAL_TOKEN must be at least 32 characters/ });
});
