import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { createApiKey, revokeApiKey } from '../domain/tenancy/api-keys.js';
import { withTenant } from '../domain/tenancy/context.js';
import { setInstanceAllowList, setInstanceEnabled } from '../domain/tenancy/instances.js';
import { canonical, rawCall, type RawResponse } from './helpers/auth-matrix.js';
import { testDatabases } from './helpers/databases.js';
import { fixtureRoute } from './helpers/fixture-routes.js';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

// A fixture route behind the same pipeline (auth included) that reports the address Express saw,
// so the IP tests can say what they are evaluating.
const whoami = fixtureRoute({
  method: 'get',
  path: '/v1/test-auth/whoami',
  operationId: 'testWhoami',
  summary: 'test fixture',
  answers: 'the caller address',
  handler: async (_ctx, res) => ({ ip: res.req.ip ?? null }),
});

const dbs = await testDatabases(t, 'auth');
const { url } = await startTestWeb(t, dbs, { extraRoutes: [whoami] });
const proxied = await startTestWeb(t, dbs, { extraRoutes: [whoami], env: { TRUST_PROXY: 'loopback' } });

/** The assertions the shared checkers use (root and subtests have them alike). */
type Asserts = Pick<typeof t, 'equal' | 'ok' | 'same'>;

const SENDERS = '/v1/senders';
const GENERIC_401 = 'Authentication credentials are missing or invalid';
const GENERIC_403 = 'The credentials do not allow this operation';

function keyParts(key: string): { prefix: string; keyId: string; token: string } {
  const [prefix, keyId, token] = key.split('.');
  return { prefix: prefix!, keyId: keyId!, token: token! };
}

/** A well-formed token (43 base64url characters) that is nobody's. */
function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

function bearer(key: string, slug: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'x-instance-slug': slug };
}

async function getSenders(headers: Record<string, string>, base = url): Promise<RawResponse> {
  return rawCall(base + SENDERS, headers);
}

/** A 401 as the spec wants it, checked field by field (the matrix then checks they are all equal). */
function assert401Shape(t: Asserts, r: RawResponse, label: string): void {
  t.equal(r.status, 401, `${label}: status`);
  t.equal(r.headers['www-authenticate'], 'Bearer', `${label}: WWW-Authenticate is exactly "Bearer"`);
  t.equal(r.headers['content-type'], 'application/problem+json; charset=utf-8', `${label}: content-type`);
  t.equal(Number(r.headers['content-length']), Buffer.byteLength(r.text), `${label}: content-length`);
  t.ok(r.headers['x-request-id'], `${label}: X-Request-Id present`);
  t.equal(r.body?.trace_id, r.headers['x-request-id'], `${label}: trace_id equals X-Request-Id`);
  t.same(
    { ...r.body, trace_id: undefined },
    {
      type: 'https://cartero.dev/problems/unauthorized',
      title: 'Unauthorized',
      status: 401,
      detail: GENERIC_401,
      code: 'unauthorized',
      trace_id: undefined,
    },
    `${label}: problem body`,
  );
  t.same(Object.keys(r.body ?? {}).sort(), ['code', 'detail', 'status', 'title', 'trace_id', 'type'], `${label}: no extra fields`);
}


const a = await makeTenant(dbs.pool, { scopes: ['senders:read', 'domains:read'] });
const b = await makeTenant(dbs.pool, { scopes: ['senders:read', 'domains:read'] });

t.test('the 401 matrix: every credential failure is the same response', async (t) => {
  const control = await getSenders(a.headers);
  t.equal(control.status, 200, 'control: the valid key and slug are accepted');

  const { prefix, keyId, token } = keyParts(a.key);
  const revoked = await makeTenant(dbs.pool);
  await revokeApiKey(dbs.pool, revoked.keyId);
  t.equal((await getSenders(revoked.headers)).status, 401, 'revoked key (sanity: revocation took effect)');
  const expired = await makeTenant(dbs.pool, { expiresAt: new Date(Date.now() - 60_000) });
  const notYetExpired = await makeTenant(dbs.pool, { expiresAt: new Date(Date.now() + 3_600_000) });
  t.equal((await getSenders(notYetExpired.headers)).status, 200, 'control: a key expiring in the future works');

  const cases: Array<[string, Record<string, string>]> = [
    ['missing Authorization', { 'x-instance-slug': a.slug }],
    ['Basic scheme', { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}`, 'x-instance-slug': a.slug }],
    ['valid key under the Basic scheme', { authorization: `Basic ${a.key}`, 'x-instance-slug': a.slug }],
    ['valid key with no scheme', { authorization: a.key, 'x-instance-slug': a.slug }],
    ['Bearer with garbage', bearer('not-a-key', a.slug)],
    ['Bearer with nothing', { authorization: 'Bearer ', 'x-instance-slug': a.slug }],
    ['three parts, wrong prefix', bearer(`abc.${keyId}.${token}`, a.slug)],
    ['unknown key_id', bearer(`${prefix}.${randomBytes(8).toString('hex')}.${token}`, a.slug)],
    ['right key_id, wrong token', bearer(`${prefix}.${keyId}.${randomToken()}`, a.slug)],
    ['revoked key', revoked.headers],
    ['expired key', expired.headers],
    ['missing X-Instance-Slug', { authorization: `Bearer ${a.key}` }],
    ['unknown slug', bearer(a.key, `nobody-${randomBytes(4).toString('hex')}`)],
    ["A's valid key with B's slug", bearer(a.key, b.slug)],
  ];

  const responses: Array<[string, RawResponse]> = [];
  for (const [label, headers] of cases) responses.push([label, await getSenders(headers)]);

  for (const [label, r] of responses) assert401Shape(t, r, label);

  const [refLabel, ref] = responses[0]!;
  for (const [label, r] of responses.slice(1)) {
    t.same(canonical(r), canonical(ref), `${label} is identical to ${refLabel} (status, body apart from trace_id, headers)`);
  }
  const ids = new Set(responses.map(([, r]) => r.headers['x-request-id']));
  t.equal(ids.size, responses.length, 'each 401 has its own X-Request-Id for support to correlate');
});

t.test('a disabled instance does not reveal itself to a bad key: still the ordinary 401', async (t) => {
  const d = await makeTenant(dbs.pool);
  const reference = await getSenders({});
  await setInstanceEnabled(dbs.pool, d.slug, false);
  t.teardown(() => setInstanceEnabled(dbs.pool, d.slug, true));
  const wrongToken = await getSenders(bearer(`${keyParts(d.key).prefix}.${d.keyId}.${randomToken()}`, d.slug));
  assert401Shape(t, wrongToken, 'wrong token on a disabled instance');
  t.same(canonical(wrongToken), canonical(reference));
});

t.test('403 forbidden: missing scope and disabled instance', async (t) => {
  t.test('a key without the route scope is 403 forbidden, generic, no WWW-Authenticate', async (t) => {
    const domainsOnly = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
    const r = await getSenders(domainsOnly.headers);
    t.equal(r.status, 403);
    t.same({ ...r.body, trace_id: undefined }, {
      type: 'https://cartero.dev/problems/forbidden',
      title: 'Forbidden',
      status: 403,
      detail: GENERIC_403,
      code: 'forbidden',
      trace_id: undefined,
    });
    t.equal(r.body.trace_id, r.headers['x-request-id']);
    t.equal(r.headers['www-authenticate'], undefined, 'no WWW-Authenticate on a 403');
    t.equal(r.headers['content-type'], 'application/problem+json; charset=utf-8');
  });

  t.test('scopes are independent: one never implies another', async (t) => {
    const domainsOnly = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
    t.equal((await rawCall(url + '/v1/domains', domainsOnly.headers)).status, 200, 'domains:read reads domains');
    t.equal((await rawCall(url + SENDERS, domainsOnly.headers)).status, 403, 'domains:read does not read senders');
    const sendersOnly = await makeTenant(dbs.pool, { scopes: ['senders:read'] });
    t.equal((await rawCall(url + SENDERS, sendersOnly.headers)).status, 200, 'senders:read reads senders');
    t.equal((await rawCall(url + '/v1/domains', sendersOnly.headers)).status, 403, 'senders:read does not read domains');
    // Every other scope together still does not grant senders:read.
    const everythingElse = await makeTenant(dbs.pool, {
      scopes: ['mail:read', 'mail:send', 'templates:read', 'templates:write', 'consent:read', 'consent:write', 'dataset:read',
        'dataset:write', 'form:read', 'form:write', 'domains:read', 'webhooks:read', 'webhooks:write'],
    });
    const r = await getSenders(everythingElse.headers);
    t.equal(r.status, 403);
    t.equal(r.body.code, 'forbidden');
  });

  t.test('a disabled instance is 403 forbidden for a valid key, identical to the scope refusal', async (t) => {
    const d = await makeTenant(dbs.pool, { scopes: ['senders:read'] });
    t.equal((await getSenders(d.headers)).status, 200, 'control: enabled instance answers');
    await setInstanceEnabled(dbs.pool, d.slug, false);
    const disabled = await getSenders(d.headers);
    t.equal(disabled.status, 403);
    t.equal(disabled.body.code, 'forbidden');
    t.equal(disabled.body.detail, GENERIC_403);
    t.equal(disabled.headers['www-authenticate'], undefined);
    t.equal((await rawCall(url + '/v1/domains', d.headers)).status, 403, 'on every route, whatever the scope');

    const scopeOnly = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
    const scopeRefusal = await getSenders(scopeOnly.headers);
    t.same(canonical(disabled), canonical(scopeRefusal), 'a disabled instance and a missing scope are indistinguishable');

    await setInstanceEnabled(dbs.pool, d.slug, true);
    t.equal((await getSenders(d.headers)).status, 200, 're-enabled: the key works again');
  });
});

t.test('IP allow lists', async (t) => {
  const OUTSIDE = '10.0.0.0/8';
  const LOOPBACK = '127.0.0.0/8';

  t.test('the server sees loopback callers as an IPv4-mapped or plain IPv4 address, and 127.0.0.0/8 matches it', async (t) => {
    const c = await makeTenant(dbs.pool, { allowCidrs: [LOOPBACK] });
    const r = await rawCall(url + '/v1/test-auth/whoami', c.headers);
    t.equal(r.status, 200);
    t.match(r.body.ip, /^(::ffff:)?127\.0\.0\.1$/, `req.ip is ${r.body.ip}`);
  });

  t.test('instance list alone: outside is 403 ip_not_allowed, inside is 200', async (t) => {
    const c = await makeTenant(dbs.pool);
    t.equal((await getSenders(c.headers)).status, 200, 'control: empty list allows everyone');
    await setInstanceAllowList(dbs.pool, c.slug, { add: [OUTSIDE] });
    const refused = await getSenders(c.headers);
    t.equal(refused.status, 403);
    t.equal(refused.body.code, 'ip_not_allowed');
    t.equal(refused.body.type, 'https://cartero.dev/problems/ip-not-allowed');
    t.equal(refused.headers['www-authenticate'], undefined);
    await setInstanceAllowList(dbs.pool, c.slug, { add: [LOOPBACK] });
    t.equal((await getSenders(c.headers)).status, 200, 'any matching entry of the list admits');
    await setInstanceAllowList(dbs.pool, c.slug, { clear: true, add: ['127.0.0.1'] });
    t.equal((await getSenders(c.headers)).status, 200, 'a bare address is a /32');
  });

  t.test('key list alone: outside is 403 ip_not_allowed, inside is 200', async (t) => {
    const outside = await makeTenant(dbs.pool, { allowCidrs: [OUTSIDE] });
    const refused = await getSenders(outside.headers);
    t.equal(refused.status, 403);
    t.equal(refused.body.code, 'ip_not_allowed');
    const inside = await createApiKey(dbs.pool, { instanceSlug: outside.slug, scopes: ['senders:read'], allowCidrs: [LOOPBACK] });
    t.equal((await getSenders(bearer(inside.key, outside.slug))).status, 200, 'another key of the same instance, loopback allowed');
  });

  t.test('both lists must admit the caller', async (t) => {
    const c = await makeTenant(dbs.pool, { allowCidrs: [OUTSIDE] });
    await setInstanceAllowList(dbs.pool, c.slug, { add: [LOOPBACK] });
    t.equal((await getSenders(c.headers)).body.code, 'ip_not_allowed', 'instance admits, key refuses');
    const k = await createApiKey(dbs.pool, { instanceSlug: c.slug, scopes: ['senders:read'], allowCidrs: [LOOPBACK] });
    t.equal((await getSenders(bearer(k.key, c.slug))).status, 200, 'both admit');
    await setInstanceAllowList(dbs.pool, c.slug, { clear: true, add: [OUTSIDE] });
    t.equal((await getSenders(bearer(k.key, c.slug))).body.code, 'ip_not_allowed', 'key admits, instance refuses');
  });

  const v6url = url.replace('127.0.0.1', '[::1]');
  const hasV6 = await fetch(v6url + '/healthz').then(() => true, () => false);
  t.test('an IPv6 caller is matched against IPv6 entries, not IPv4 ones', { skip: !hasV6 && 'no IPv6 loopback here' }, async (t) => {
    const c = await makeTenant(dbs.pool, { allowCidrs: ['::1'] });
    t.equal((await getSenders(c.headers, v6url)).status, 200, '::1 admitted by ::1/128');
    t.equal((await getSenders(c.headers)).body.code, 'ip_not_allowed', '127.0.0.1 not admitted by ::1/128');
    const v4 = await makeTenant(dbs.pool, { allowCidrs: [LOOPBACK] });
    t.equal((await getSenders(v4.headers, v6url)).body.code, 'ip_not_allowed', '::1 not admitted by 127.0.0.0/8');
  });

  t.test('an IPv4-mapped IPv6 entry admits the IPv4 addresses it names, as a bare mapped address does', async (t) => {
    // Callers are evaluated as plain IPv4 (::ffff:127.0.0.1 -> 127.0.0.1), and a bare mapped
    // address entry is stored as IPv4; a mapped network must be too, or it can never match.
    const bare = await makeTenant(dbs.pool, { allowCidrs: ['::ffff:127.0.0.1'] });
    t.equal((await getSenders(bare.headers)).status, 200, 'bare ::ffff:127.0.0.1');
    const network = await makeTenant(dbs.pool, { allowCidrs: ['::ffff:127.0.0.0/104'] });
    t.equal((await getSenders(network.headers)).status, 200, 'network ::ffff:127.0.0.0/104');
  });

  t.test('the two refusals are identical: the body does not say which list refused', async (t) => {
    const byInstance = await makeTenant(dbs.pool);
    await setInstanceAllowList(dbs.pool, byInstance.slug, { add: [OUTSIDE] });
    const byKey = await makeTenant(dbs.pool, { allowCidrs: [OUTSIDE] });
    const r1 = await getSenders(byInstance.headers);
    const r2 = await getSenders(byKey.headers);
    t.equal(r1.status, 403);
    t.equal(r1.body.code, 'ip_not_allowed');
    t.equal(r1.body.trace_id, r1.headers['x-request-id']);
    t.same(canonical(r1), canonical(r2));
    t.notMatch(r1.body.detail, /instance|key/i, 'detail names neither control');
  });

  t.test('ip_not_allowed comes only after authentication and authorization', async (t) => {
    const reference401 = await getSenders({});
    const instanceListed = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
    await setInstanceAllowList(dbs.pool, instanceListed.slug, { add: [OUTSIDE] });
    const keyListed = await makeTenant(dbs.pool, { scopes: ['domains:read'], allowCidrs: [OUTSIDE] });

    for (const [label, c] of [['instance list', instanceListed], ['key list', keyListed]] as const) {
      // Sanity: with the right scope this caller would be refused for its address.
      t.equal((await rawCall(url + '/v1/domains', c.headers)).body.code, 'ip_not_allowed', `${label}: address refused when authorized`);

      const badKey = await getSenders(bearer(`${keyParts(c.key).prefix}.${c.keyId}.${randomToken()}`, c.slug));
      assert401Shape(t, badKey, `${label}: bad key from a disallowed address`);
      t.same(canonical(badKey), canonical(reference401), `${label}: the ordinary 401`);

      const noScope = await getSenders(c.headers);
      t.equal(noScope.status, 403, `${label}: valid key lacking the scope`);
      t.equal(noScope.body.code, 'forbidden', `${label}: forbidden, not ip_not_allowed`);

      await setInstanceEnabled(dbs.pool, c.slug, false);
      const disabled = await rawCall(url + '/v1/domains', c.headers);
      t.equal(disabled.body.code, 'forbidden', `${label}: disabled instance is forbidden, not ip_not_allowed`);
      await setInstanceEnabled(dbs.pool, c.slug, true);
    }
  });
});

t.test('TRUST_PROXY decides whether X-Forwarded-For is believed', async (t) => {
  t.test('unset: X-Forwarded-For is ignored, the socket address is evaluated', async (t) => {
    const tenOnly = await makeTenant(dbs.pool, { allowCidrs: ['10.0.0.0/8'] });
    const claimed = await getSenders({ ...tenOnly.headers, 'x-forwarded-for': '10.1.2.3' });
    t.equal(claimed.status, 403, 'claiming an allowed address does not get in');
    t.equal(claimed.body.code, 'ip_not_allowed');

    const loopOnly = await makeTenant(dbs.pool, { allowCidrs: ['127.0.0.0/8'] });
    const spoofed = await getSenders({ ...loopOnly.headers, 'x-forwarded-for': '203.0.113.9' });
    t.equal(spoofed.status, 200, 'claiming an outside address does not get the caller refused');

    const seen = await rawCall(url + '/v1/test-auth/whoami', { ...loopOnly.headers, 'x-forwarded-for': '10.1.2.3' });
    t.match(seen.body.ip, /^(::ffff:)?127\.0\.0\.1$/);
  });

  t.test('TRUST_PROXY=loopback: the forwarded address is the one the lists evaluate', async (t) => {
    const tenOnly = await makeTenant(dbs.pool, { allowCidrs: ['10.0.0.0/8'] });
    t.equal((await getSenders({ ...tenOnly.headers, 'x-forwarded-for': '10.1.2.3' }, proxied.url)).status, 200, 'key list admits the forwarded address');
    t.equal((await getSenders(tenOnly.headers, proxied.url)).body.code, 'ip_not_allowed', 'without the header the proxy itself (loopback) is evaluated');

    const instTen = await makeTenant(dbs.pool);
    await setInstanceAllowList(dbs.pool, instTen.slug, { add: ['10.0.0.0/8'] });
    t.equal((await getSenders({ ...instTen.headers, 'x-forwarded-for': '10.1.2.3' }, proxied.url)).status, 200, 'instance list admits the forwarded address');

    const loopOnly = await makeTenant(dbs.pool, { allowCidrs: ['127.0.0.0/8'] });
    const outside = await getSenders({ ...loopOnly.headers, 'x-forwarded-for': '203.0.113.9' }, proxied.url);
    t.equal(outside.status, 403, 'a forwarded outside address is refused even though the proxy is loopback');
    t.equal(outside.body.code, 'ip_not_allowed');
    t.equal((await getSenders(loopOnly.headers, proxied.url)).status, 200, 'no header: loopback caller admitted');

    const seen = await rawCall(proxied.url + '/v1/test-auth/whoami', { ...loopOnly.headers, 'x-forwarded-for': '127.0.0.9' });
    t.equal(seen.body.ip, '127.0.0.9', 'req.ip is the forwarded address');
  });

  t.test('TRUST_PROXY=loopback: only the hop added by the trusted proxy counts, not client-written entries', async (t) => {
    const tenOnly = await makeTenant(dbs.pool, { allowCidrs: ['10.0.0.0/8'] });
    // The client wrote 10.1.2.3; the loopback proxy appended the real client 203.0.113.9.
    const r = await getSenders({ ...tenOnly.headers, 'x-forwarded-for': '10.1.2.3, 203.0.113.9' }, proxied.url);
    t.equal(r.status, 403);
    t.equal(r.body.code, 'ip_not_allowed');
  });

  t.test('TRUST_PROXY=loopback: a forwarded value that is not an address is refused by a non-empty list', async (t) => {
    const loopOnly = await makeTenant(dbs.pool, { allowCidrs: ['127.0.0.0/8'] });
    const r = await getSenders({ ...loopOnly.headers, 'x-forwarded-for': 'not-an-ip' }, proxied.url);
    t.equal(r.status, 403);
    t.equal(r.body.code, 'ip_not_allowed');
  });
});

t.test('row-level security is a second wall behind instance_id in WHERE', async (t) => {
  const ra = await makeTenant(dbs.pool);
  const rb = await makeTenant(dbs.pool);
  const aIds = await makeSenders(dbs.pool, ra.tenant, { senders: [{ email: 'a1', name: 'A one' }, { email: 'a2', name: 'A two' }] });
  const bIds = await makeSenders(dbs.pool, rb.tenant, { senders: [{ email: 'b1', name: 'B one' }] });

  t.test('a query without instance_id sees only the tenant rows', async (t) => {
    const all = await dbs.pool.query<{ id: number }>('SELECT id FROM senders WHERE id = ANY($1)', [[...aIds, ...bIds]]);
    t.equal(all.rows.length, aIds.length + bIds.length, 'control: outside a tenant transaction both tenants rows exist');

    // Asked for both tenants' senders (every instance also has its sandbox sender): only A's come.
    const seen = await withTenant(dbs.pool, ra.tenant, (c) => c.query<{ id: number }>('SELECT id FROM senders WHERE id = ANY($1)', [[...aIds, ...bIds]]));
    t.same(seen.rows.map((r) => r.id).sort((x, y) => x - y), [...aIds].sort((x, y) => x - y));

    const explicitlyB = await withTenant(dbs.pool, ra.tenant, (c) =>
      c.query('SELECT id FROM senders WHERE instance_id = $1', [rb.tenant.instanceId]));
    t.equal(explicitlyB.rows.length, 0, 'asking for B by instance_id still returns nothing');

    const bDomains = await withTenant(dbs.pool, ra.tenant, (c) => c.query('SELECT id FROM domains WHERE instance_id = $1', [rb.tenant.instanceId]));
    t.equal(bDomains.rows.length, 0, 'domains are walled too');

    const keys = await withTenant(dbs.pool, ra.tenant, (c) => c.query<{ key_id: string }>('SELECT key_id FROM api_keys'));
    t.same(keys.rows.map((r) => r.key_id), [ra.keyId], 'api_keys are walled too');
  });

  t.test('updates cannot reach another tenant rows', async (t) => {
    const upd = await withTenant(dbs.pool, ra.tenant, (c) => c.query("UPDATE senders SET name = 'hijacked' WHERE instance_id = $1", [rb.tenant.instanceId]));
    t.equal(upd.rowCount, 0);
    const b1 = await dbs.pool.query<{ name: string }>('SELECT name FROM senders WHERE id = $1', [bIds[0]]);
    t.equal(b1.rows[0]!.name, 'B one');
  });

  t.test('an INSERT for another instance is refused by the policy', async (t) => {
    const bDomain = (await dbs.pool.query<{ id: number }>('SELECT id FROM domains WHERE instance_id = $1', [rb.tenant.instanceId])).rows[0]!.id;
    const aDomain = (await dbs.pool.query<{ id: number }>('SELECT id FROM domains WHERE instance_id = $1', [ra.tenant.instanceId])).rows[0]!.id;

    // Control: the same statement for the tenant's own instance is accepted (so the refusal below
    // is the policy, not a missing privilege or a bad statement).
    const own = await withTenant(dbs.pool, ra.tenant, (c) =>
      c.query('INSERT INTO senders (instance_id, domain_id, name, email_address) VALUES ($1, $2, $3, $4) RETURNING id',
        [ra.tenant.instanceId, aDomain, 'Own', `own-${randomBytes(3).toString('hex')}@a.example`]));
    t.equal(own.rows.length, 1, 'control: own-instance insert works');

    const email = `intruder-${randomBytes(3).toString('hex')}@b.example`;
    await t.rejects(
      withTenant(dbs.pool, ra.tenant, (c) =>
        c.query('INSERT INTO senders (instance_id, domain_id, name, email_address) VALUES ($1, $2, $3, $4)',
          [rb.tenant.instanceId, bDomain, 'Intruder', email])),
      { code: '42501', message: /row-level security/ },
    );
    const leaked = await dbs.pool.query('SELECT id FROM senders WHERE email_address = $1', [email]);
    t.equal(leaked.rows.length, 0, 'nothing was written');
  });
});

t.test('key format and storage', async (t) => {
  const c = await makeTenant(dbs.pool);
  const created = await createApiKey(dbs.pool, { instanceSlug: c.slug, scopes: ['senders:read'] });

  t.test('the key is <prefix>.<key_id>.<token>', async (t) => {
    t.match(created.key, /^crt\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    const { prefix, keyId, token } = keyParts(created.key);
    t.equal(prefix, 'crt');
    t.equal(keyId, created.key_id, 'the middle part is the key_id');
    t.ok(token.length >= 43, 'the token carries at least 256 bits');
    const other = await createApiKey(dbs.pool, { instanceSlug: c.slug, scopes: ['senders:read'] });
    t.not(keyParts(other.key).token, token, 'tokens are random');
    t.not(other.key_id, created.key_id, 'key ids are unique');
    t.equal((await getSenders(bearer(created.key, c.slug))).status, 200, 'the printed key authenticates');
  });

  t.test('the database stores no token, only its hash', async (t) => {
    const { token } = keyParts(created.key);
    const { rows } = await dbs.pool.query('SELECT * FROM api_keys WHERE key_id = $1', [created.key_id]);
    t.equal(rows.length, 1);
    const row = rows[0]!;
    const asText = JSON.stringify(row);
    t.notOk(asText.includes(token), 'the token is in no column');
    t.notOk(asText.includes(created.key), 'the full key is in no column');
    // Also as Postgres renders every column as text (bytea as hex, arrays, ...).
    const textRow = await dbs.pool.query('SELECT k::text AS t FROM api_keys k WHERE key_id = $1', [created.key_id]);
    t.notOk((textRow.rows[0]!.t as string).includes(token), 'not in the text form of the row either');
    const tokenHex = Buffer.from(token, 'utf8').toString('hex');
    t.notOk((textRow.rows[0]!.t as string).includes(tokenHex), 'nor its bytes as hex');
    t.ok(Buffer.isBuffer(row.token_sha256) && row.token_sha256.equals(createHash('sha256').update(token).digest()), 'sha256(token) is stored');
  });
});

t.test('the auth scheme name is case-insensitive (RFC 9110)', async (t) => {
  const lower = await fetch(`${url}/v1/senders`, { headers: { authorization: `bearer ${a.key}`, 'x-instance-slug': a.slug } });
  t.equal(lower.status, 200);
});
