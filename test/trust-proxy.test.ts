// TRUST_PROXY accepts a hop count or proxy addresses only (config/config.ts): `true` would let
// any client write, in X-Forwarded-For, the address IP allow lists check. test/auth.test.ts
// covers the unset and address-list cases through the allow lists; this file the values refused
// and a hop count.
import t from 'tap';
import { loadConfig, parseTrustProxy } from '../config/config.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

t.test('config: what TRUST_PROXY accepts', async (t) => {
  t.equal(parseTrustProxy(undefined), false);
  t.equal(parseTrustProxy(''), false);
  t.equal(parseTrustProxy('false'), false);
  t.equal(parseTrustProxy('0'), false);
  t.equal(parseTrustProxy('1'), 1, 'a hop count');
  t.equal(parseTrustProxy('2'), 2);
  t.equal(parseTrustProxy('loopback'), 'loopback');
  t.equal(parseTrustProxy(' loopback ,10.0.0.0/8, 2001:db8::/32 '), 'loopback, 10.0.0.0/8, 2001:db8::/32', 'addresses, subnets, names');
});

t.test('config: trust in every hop is refused at start, with what to set instead', async (t) => {
  for (const value of ['true', 'TRUE', ' true ', 'yes', 'on', '*', 'all']) {
    t.throws(() => loadConfig({ TRUST_PROXY: value }), { message: /TRUST_PROXY=.* would believe X-Forwarded-For from any client.*TRUST_PROXY=1.*loopback/ }, JSON.stringify(value));
  }
  for (const value of ['0.0.0.0/0', '::/0', '10.0.0.0/33', 'loopback, proxy.internal', 'garbage']) {
    t.throws(() => loadConfig({ TRUST_PROXY: value }), { message: /^TRUST_PROXY=.*expected a hop count/ }, JSON.stringify(value));
  }
});

const dbs = await testDatabases(t, 'trustproxy');
const direct = await startTestWeb(t, dbs);
const oneHop = await startTestWeb(t, dbs, { env: { TRUST_PROXY: '1' } });
// Only 10.0.0.0/8 may call: the test client (loopback) is outside it.
const tenOnly = await makeTenant(dbs.pool, { allowCidrs: ['10.0.0.0/8'] });

async function senders(base: string, xff?: string): Promise<{ status: number; code?: string }> {
  const r = await fetch(`${base}/v1/senders`, { headers: { ...tenOnly.headers, ...(xff ? { 'x-forwarded-for': xff } : {}) } });
  const body = (await r.json()) as { code?: string };
  return { status: r.status, code: body.code };
}

t.test('the web refuses to start with TRUST_PROXY=true', async (t) => {
  await t.rejects(startTestWeb(t, dbs, { env: { TRUST_PROXY: 'true' } }), { message: /would believe X-Forwarded-For from any client/ });
});

t.test('no proxy configured: a forged X-Forwarded-For does not pass the allow list', async (t) => {
  t.match(await senders(direct.url, '10.1.2.3'), { status: 403, code: 'ip_not_allowed' });
  t.match(await senders(direct.url, '10.1.2.3, 10.9.9.9'), { status: 403, code: 'ip_not_allowed' });
});

t.test('TRUST_PROXY=1: only the entry the one proxy appended is believed', async (t) => {
  // The loopback client plays the proxy: the address it appended is the client's.
  t.match(await senders(oneHop.url, '10.1.2.3'), { status: 200 }, 'control: the proxy-reported client address is evaluated');
  // A client behind that proxy wrote 10.1.2.3 itself; the proxy appended its real address.
  t.match(await senders(oneHop.url, '10.1.2.3, 203.0.113.9'), { status: 403, code: 'ip_not_allowed' }, 'the client-written entry is not believed');
  t.match(await senders(oneHop.url), { status: 403, code: 'ip_not_allowed' }, 'no header: the proxy itself is evaluated');
});
