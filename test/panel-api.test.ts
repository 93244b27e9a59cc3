import t from 'tap';
import { createHash } from 'node:crypto';
import { setUserDisabled } from '../domain/panel/users.js';
import { canonical, rawCall } from './helpers/auth-matrix.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { startTestWeb } from './helpers/web.js';
import type { Teardown } from './helpers/wait.js';

/**
 * The operator panel's /v1/private API (issue 30, docs/panel.md): login and its refusals, session
 * storage, sliding expiry, logout, failed-login limits per account and per address shared by two
 * web apps, roles, the instance wall and the last-owner rule, against the real web app and Postgres.
 */

const dbs = await testDatabases(t, 'panelapi');
const pool = dbs.pool;
const { url } = await startTestWeb(t, dbs);

const a = await makeTenant(pool);
const b = await makeTenant(pool);
const owner = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'owner' }, { instanceId: b.tenant.instanceId, role: 'viewer' }]);
const admin = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'admin' }]);
const viewer = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
const onlyB = await makePanelUser(pool, [{ instanceId: b.tenant.instanceId, role: 'owner' }]);

/**
 * The web apps some tests start beside the first, with other settings: they render no template,
 * so one render thread each instead of the default two (each thread loads MJML at start, about
 * 0.75 s of CPU).
 */
const otherWeb = (t: Teardown, env: Record<string, string>) => startTestWeb(t, dbs, { env: { TEMPLATE_RENDER_THREADS: '1', ...env } });
/** Two such web apps on the same database: a login limit must hold across web dynos (it lives in Postgres). */
const twoWebs = async (t: Teardown, env: Record<string, string>) => [await otherWeb(t, env), await otherWeb(t, env)] as const;
/** The headers of a request from client address `ip` (behind TRUST_PROXY=loopback). */
const from = (ip: string) => ({ 'x-forwarded-for': ip });

const login = (body: unknown, headers: Record<string, string> = {}, at = url) => rawCall(at + '/v1/private/sessions', headers, { method: 'POST', body });
const call = (method: string, path: string, token: string, slug?: string, body?: unknown) => jsonCall(url, method, path, body, panelHeaders(token, slug));

t.test('login: 201 with a prefixed random token stored only as its sha256, expires_at, the user', async (t) => {
  const before = Date.now();
  const res = await login({ email: owner.email.toUpperCase(), password: owner.password });
  t.equal(res.status, 201, res.text);
  t.same(Object.keys(res.body).sort(), ['expires_at', 'token', 'user']);
  t.match(res.body.token, /^crtsess_[A-Za-z0-9_-]{43}$/, 'crtsess_ and 32 random bytes');
  t.same(res.body.user, { id: owner.id, email: owner.email }, 'the user, found whatever the case of the address');
  const ttl = Date.parse(res.body.expires_at) - before;
  t.ok(ttl > 8 * 3600_000 - 60_000 && ttl < 8 * 3600_000 + 60_000, `expires in PANEL_SESSION_TTL_SECONDS (default 8 h): ${ttl} ms`);
  const { rows } = await pool.query<{ token_sha256: Buffer; text: string }>('SELECT token_sha256, row_to_json(s)::text AS text FROM panel_sessions s WHERE user_id = $1', [owner.id]);
  const hash = createHash('sha256').update(res.body.token).digest();
  t.ok(rows.some((r) => r.token_sha256.equals(hash)), 'the row holds sha256(token)');
  t.notOk(rows.some((r) => r.text.includes(res.body.token.slice(8))), 'the token itself is stored nowhere in the row');
  const second = await login({ email: owner.email, password: owner.password });
  t.not(second.body.token, res.body.token, 'each login its own token');
});

t.test('wrong password, unknown address, disabled user: one identical 401 invalid_credentials', async (t) => {
  const disabled = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  await setUserDisabled(pool, disabled.email, true);
  const wrong = await login({ email: viewer.email, password: 'not-the-password' });
  const unknown = await login({ email: 'nobody-here@example.org', password: 'not-the-password' });
  const off = await login({ email: disabled.email, password: disabled.password });
  t.equal(wrong.status, 401);
  t.equal(wrong.body.code, 'invalid_credentials');
  t.equal(wrong.body.trace_id, wrong.headers['x-request-id']);
  t.same(canonical(unknown), canonical(wrong), 'unknown address: the same answer, byte for byte (trace_id aside)');
  t.same(canonical(off), canonical(wrong), 'a disabled user with its right password: the same answer');

  // Comparable time: an unknown address is verified against a dummy scrypt hash.
  const timed = async (email: string) => {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await login({ email, password: 'not-the-password' });
      times.push(performance.now() - start);
    }
    return times.sort((x, y) => x - y)[1]!;
  };
  const known = await timed(admin.email);
  const none = await timed('nobody-either@example.org');
  t.ok(none > known * 0.4 && none < known * 2.5, `unknown address ${none.toFixed(0)} ms vs known ${known.toFixed(0)} ms (scrypt either way)`);
  t.ok(none > 20, 'an unknown address costs a hash too');
});

t.test('a malformed login body is 422, as any body is', async (t) => {
  const res = await login({ email: owner.email });
  t.equal(res.status, 422);
  t.equal(res.body.errors[0].pointer, '/password');
});

t.test('GET /v1/private/instances: the user’s instances and roles; no session is the API’s 401', async (t) => {
  const token = await panelLogin(url, owner);
  const res = await call('GET', '/v1/private/instances', token);
  t.equal(res.status, 200);
  t.same(
    res.body.data.map((i: { slug: string; role: string }) => [i.slug, i.role]),
    [[a.slug, 'owner'], [b.slug, 'viewer']].sort((x, y) => x[0]!.localeCompare(y[0]!)),
  );
  const apiRef = await rawCall(url + '/v1/senders');
  const refusals: Array<Record<string, string>> = [{}, { authorization: 'Bearer crtsess_' + 'x'.repeat(43) }, { authorization: `Bearer ${a.key}` }, { authorization: 'Basic abc' }];
  for (const headers of refusals) {
    t.same(canonical(await rawCall(url + '/v1/private/instances', headers)), canonical(apiRef), `${JSON.stringify(headers)}: the API's one 401`);
  }
});

t.test('DELETE /v1/private/sessions/current: 204, that token is refused, another session stays', async (t) => {
  const one = await panelLogin(url, viewer);
  const two = await panelLogin(url, viewer);
  const out = await call('DELETE', '/v1/private/sessions/current', one);
  t.equal(out.status, 204);
  t.equal((await call('GET', '/v1/private/instances', one)).status, 401, 'the ended token: 401');
  t.equal((await call('DELETE', '/v1/private/sessions/current', one)).status, 401, 'ending it again: 401');
  t.equal((await call('GET', '/v1/private/instances', two)).status, 200, 'the other session still works');
});

t.test('disabling a user revokes its sessions at once', async (t) => {
  const user = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  const token = await panelLogin(url, user);
  t.equal((await call('GET', '/v1/private/members', token, a.slug)).status, 200);
  const disabled = await setUserDisabled(pool, user.email, true);
  t.equal(disabled.sessions_revoked, 1);
  t.equal((await call('GET', '/v1/private/members', token, a.slug)).status, 401);
  await setUserDisabled(pool, user.email, false);
  t.equal((await call('GET', '/v1/private/members', token, a.slug)).status, 401, 'enabling again does not bring the old session back');
});

t.test('roles: viewer reads; admin writes but cannot manage members; owner manages them', async (t) => {
  const [o, ad, v] = [await panelLogin(url, owner), await panelLogin(url, admin), await panelLogin(url, viewer)];
  const list = await call('GET', '/v1/private/members', v, a.slug);
  t.equal(list.status, 200, 'a viewer reads the members');
  const roles = new Map(list.body.data.map((m: { email: string; role: string }) => [m.email, m.role]));
  t.same([roles.get(owner.email), roles.get(admin.email), roles.get(viewer.email)], ['owner', 'admin', 'viewer'], 'with their roles');
  t.notOk(roles.has(onlyB.email), 'and none of another instance');
  t.equal((await call('GET', '/v1/private/members', ad, a.slug)).status, 200, 'an admin reads them');
  const newcomer = await makePanelUser(pool);
  for (const [who, token] of [['viewer', v], ['admin', ad]] as const) {
    const add = await call('POST', '/v1/private/members', token, a.slug, { email: newcomer.email, role: 'viewer' });
    t.equal(add.status, 403, `${who}: adding is the owner's`);
    t.equal(add.body.code, 'forbidden');
    t.equal((await call('PATCH', `/v1/private/members/${viewer.id}`, token, a.slug, { role: 'admin' })).status, 403, `${who}: changing a role is the owner's`);
    t.equal((await call('DELETE', `/v1/private/members/${viewer.id}`, token, a.slug)).status, 403, `${who}: removing is the owner's`);
  }
  // An owner invites (issue 37; test/panel-invitations.test.ts holds the rest): a member once accepted.
  const invited = await call('POST', '/v1/private/members', o, a.slug, { email: newcomer.email.toUpperCase(), role: 'viewer' });
  t.equal(invited.status, 201, JSON.stringify(invited.body));
  t.match(invited.body, { email: newcomer.email.toUpperCase(), role: 'viewer', status: 'invited' });
  const nobody = await call('POST', '/v1/private/members', o, a.slug, { email: 'no-such-user@example.org', role: 'viewer' });
  t.equal(nobody.status, 201, 'an address nobody has: invited all the same (no probe)');
  const badRole = await call('POST', '/v1/private/members', o, a.slug, { email: newcomer.email, role: 'root' });
  t.equal(badRole.status, 422, 'an unknown role is a validation error');
  const newToken = await panelLogin(url, newcomer);
  const accepted = await call('POST', `/v1/private/invitations/${invited.body.id}/accept`, newToken);
  t.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const again = await call('POST', '/v1/private/members', o, a.slug, { email: newcomer.email, role: 'admin' });
  t.equal(again.status, 409);
  t.equal(again.body.code, 'user_already_member');
  const promoted = await call('PATCH', `/v1/private/members/${newcomer.id}`, o, a.slug, { role: 'admin' });
  t.equal(promoted.status, 200);
  t.equal(promoted.body.role, 'admin');
  t.equal((await call('GET', '/v1/private/members', newToken, a.slug)).status, 200, 'the new member reads');
  t.equal((await call('DELETE', `/v1/private/members/${newcomer.id}`, o, a.slug)).status, 204);
  const gone = await call('GET', '/v1/private/members', newToken, a.slug);
  t.equal(gone.status, 404, 'removed: the instance is gone for it at once');
  t.equal(gone.body.code, 'instance_not_found');
});

t.test('another instance: 404 for the instance and for its members, no existence leak', async (t) => {
  const token = await panelLogin(url, onlyB);
  const foreign = await rawCall(url + '/v1/private/members', panelHeaders(token, a.slug));
  // A missing slug as long as A's, so even Content-Length cannot tell them apart.
  const missingSlug = 't-' + 'z'.repeat(a.slug.length - 2);
  const missing = await rawCall(url + '/v1/private/members', panelHeaders(token, missingSlug));
  t.equal(foreign.status, 404);
  t.equal(foreign.body.code, 'instance_not_found');
  t.notMatch(foreign.text, owner.email, 'nothing of A');
  const strip = (r: typeof foreign) => ({ ...canonical(r), text: canonical(r).text.replace(a.slug, '<slug>').replace(missingSlug, '<slug>') });
  t.same(strip(foreign), strip(missing), 'a member of another instance is told what a missing instance tells');
  const noSlug = await call('GET', '/v1/private/members', token);
  t.equal(noSlug.status, 400, 'no X-Instance-Slug: 400');
  t.equal(noSlug.body.code, 'bad_request');

  // A's owner, naming a user who is a member of B only.
  const o = await panelLogin(url, owner);
  for (const [method, body] of [['PATCH', { role: 'viewer' }], ['DELETE', undefined]] as const) {
    const res = await call(method, `/v1/private/members/${onlyB.id}`, o, a.slug, body);
    t.equal(res.status, 404, `${method} of B's member through A`);
    t.equal(res.body.code, 'member_not_found');
  }
  const stillB = await call('GET', '/v1/private/members', token, b.slug);
  t.ok(stillB.body.data.some((m: { user_id: number; role: string }) => m.user_id === onlyB.id && m.role === 'owner'), "B's member untouched");
});

t.test('the last owner can be neither removed nor demoted (409 member_last_owner)', async (t) => {
  const o = await panelLogin(url, owner);
  for (const [method, body] of [['DELETE', undefined], ['PATCH', { role: 'admin' }]] as const) {
    const res = await call(method, `/v1/private/members/${owner.id}`, o, a.slug, body);
    t.equal(res.status, 409, `${method} of the last owner`);
    t.equal(res.body.code, 'member_last_owner');
  }
  // With a second owner, the first may step down.
  t.equal((await call('PATCH', `/v1/private/members/${admin.id}`, o, a.slug, { role: 'owner' })).status, 200);
  const down = await call('PATCH', `/v1/private/members/${owner.id}`, o, a.slug, { role: 'admin' });
  t.equal(down.status, 200, 'not the last owner any more');
  t.equal((await call('POST', '/v1/private/members', o, a.slug, { email: onlyB.email, role: 'viewer' })).status, 403, 'an admin now: members are not its to manage');
  const ad = await panelLogin(url, admin);
  t.equal((await call('DELETE', `/v1/private/members/${admin.id}`, ad, a.slug)).status, 409, 'the new sole owner cannot leave either');
  t.equal((await call('PATCH', `/v1/private/members/${owner.id}`, ad, a.slug, { role: 'owner' })).status, 200, 'restored');
});

t.test('a disabled instance: 403 forbidden for its members, as the API answers its keys', async (t) => {
  const c = await makeTenant(pool);
  const member = await makePanelUser(pool, [{ instanceId: c.tenant.instanceId, role: 'owner' }]);
  const token = await panelLogin(url, member);
  t.equal((await call('GET', '/v1/private/members', token, c.slug)).status, 200);
  await pool.query('UPDATE instances SET enabled = false WHERE id = $1', [c.tenant.instanceId]);
  const res = await call('GET', '/v1/private/members', token, c.slug);
  t.equal(res.status, 403);
  t.equal(res.body.code, 'forbidden');
});

/**
 * The clock, moved instead of slept: shifts a session's stored times into the past, as if `seconds`
 * had passed. `idle` shifts last use and expiry too (the session was not used meanwhile); otherwise
 * only its creation (it was used all along, the last use being now).
 */
async function passTime(token: string, seconds: number, idle: boolean): Promise<void> {
  const { rowCount } = await pool.query(
    `UPDATE panel_sessions SET created_at = created_at - make_interval(secs => $2),
            last_seen_at = CASE WHEN $3 THEN last_seen_at - make_interval(secs => $2) ELSE last_seen_at END,
            expires_at = CASE WHEN $3 THEN expires_at - make_interval(secs => $2) ELSE expires_at END
      WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))`,
    [token, seconds, idle],
  );
  if (rowCount !== 1) throw new Error('no such session');
}
const sessionTimes = async (token: string) =>
  (
    await pool.query<{ idle: number; age: number; left: number }>(
      `SELECT extract(epoch FROM expires_at - last_seen_at)::float AS idle, extract(epoch FROM expires_at - created_at)::float AS age,
              extract(epoch FROM expires_at - now())::float AS left
         FROM panel_sessions WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))`,
      [token],
    )
  ).rows[0]!;

t.test('sliding expiry: each use moves it ahead; unused for the TTL, 401', async (t) => {
  const ttl = 600;
  const short = await otherWeb(t, { PANEL_SESSION_TTL_SECONDS: String(ttl) });
  const user = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  const token = await panelLogin(short.url, user);
  const use = () => jsonCall(short.url, 'GET', '/v1/private/instances', undefined, panelHeaders(token));
  for (let i = 0; i < 3; i++) {
    await passTime(token, ttl - 60, true);
    t.equal((await use()).status, 200, `unused for ${ttl - 60} s, then used: alive (the TTL is ${ttl} s, each use extends it)`);
    t.ok(Math.abs((await sessionTimes(token)).idle - ttl) < 0.01, 'expires_at is last_seen_at + TTL');
  }
  await passTime(token, ttl + 1, true);
  const res = await use();
  t.equal(res.status, 401, 'unused for longer than the TTL: refused');
  t.equal(res.body.code, 'unauthorized');
});

t.test('issue 37: a session has an absolute lifetime (PANEL_SESSION_MAX_AGE_SECONDS, 7 days): used all along, it is refused past it', async (t) => {
  const week = 7 * 24 * 3600;
  const user = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  const token = await panelLogin(url, user);
  const use = (at = url) => jsonCall(at, 'GET', '/v1/private/instances', undefined, panelHeaders(token));
  // Used every few hours for almost a week: the sliding TTL (8 h) alone would keep it alive for ever.
  for (let day = 1; day <= 6; day++) {
    await passTime(token, 24 * 3600, false);
    t.equal((await use()).status, 200, `day ${day}, in use: alive`);
  }
  await passTime(token, 24 * 3600 - 3600, false);
  t.equal((await use()).status, 200, 'an hour before the week is up: alive');
  const capped = await sessionTimes(token);
  t.ok(Math.abs(capped.age - week) < 0.01, `the renewal stops at created_at + 7 days (${capped.age} s), not last use + 8 h`);
  t.ok(capped.left > 3500 && capped.left <= 3600, `an hour left, not 8 (${capped.left.toFixed(0)} s)`);
  await passTime(token, 3601, false);
  const refused = await use();
  t.equal(refused.status, 401, 'past a week, used all along: refused');

  // Refused as an expired session is: the very same answer.
  const other = await panelLogin(url, user);
  await passTime(other, 9 * 3600, true);
  const expired = await jsonCall(url, 'GET', '/v1/private/instances', undefined, panelHeaders(other));
  t.equal(expired.status, 401);
  t.same(refused.body, { ...expired.body, trace_id: refused.body.trace_id }, 'the 401 of an expired session');
  t.equal((await rawCall(url + '/v1/private/instances', { authorization: `Bearer ${token}` })).headers['www-authenticate'], 'Bearer');
});

t.test('issue 37: the maximum age bounds the first expiry too, and a lowered one ends older sessions at once', async (t) => {
  const hour = await otherWeb(t, { PANEL_SESSION_MAX_AGE_SECONDS: '3600' });
  const user = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  const before = Date.now();
  const res = await login({ email: user.email, password: user.password }, {}, hour.url);
  t.equal(res.status, 201);
  const left = Date.parse(res.body.expires_at) - before;
  t.ok(left > 3600_000 - 60_000 && left < 3600_000 + 60_000, `expires_at is the login + 1 h (the max age), not + 8 h (the TTL): ${left} ms`);
  // A session opened under the default week, two hours old and in use, meets a web app configured with one hour.
  const older = await panelLogin(url, user);
  await passTime(older, 7200, false);
  t.equal((await jsonCall(url, 'GET', '/v1/private/instances', undefined, panelHeaders(older))).status, 200, 'a week allowed: alive');
  t.equal((await jsonCall(hour.url, 'GET', '/v1/private/instances', undefined, panelHeaders(older))).status, 401, 'one hour allowed: refused');
});

t.test('failed logins per account from one address: past the budget 429 with Retry-After, on every web app, even with the right password', async (t) => {
  const env = { PANEL_LOGIN_FAILURES_PER_ACCOUNT: '3', PANEL_LOGIN_FAILURES_PER_ADDRESS: '1000' };
  const [one, two] = await twoWebs(t, env);
  const user = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  const other = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  for (let i = 0; i < 3; i++) {
    const res = await login({ email: user.email, password: 'wrong-password' }, {}, i % 2 ? two.url : one.url);
    t.equal(res.status, 401, `failure ${i + 1} (alternating web apps): 401`);
  }
  for (const at of [one.url, two.url]) {
    const res = await login({ email: user.email.toUpperCase(), password: user.password }, {}, at);
    t.equal(res.status, 429, 'past 3 failures from this address: 429, the right password too, whatever the case of the address');
    t.equal(res.body.code, 'rate_limit_exceeded');
    const retry = Number(res.headers['retry-after']);
    t.ok(retry >= 1 && retry <= 900, `Retry-After ${retry} s within the window`);
  }
  t.equal((await login({ email: other.email, password: other.password }, {}, one.url)).status, 201, 'another account from the same address signs in');
  // Parallel guesses cannot slip past the count: each takes its point atomically before its check.
  const burst = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => login({ email: burst.email, password: `wrong-${i}` }, {}, i % 2 ? two.url : one.url)),
  );
  const statuses = answers.map((r) => r.status).sort();
  t.equal(statuses.filter((s) => s === 401).length, 3, `10 at once: 3 checked (401), the rest 429 (${statuses.join(' ')})`);
  t.equal(statuses.filter((s) => s === 429).length, 7);
  // A success clears its account's count from its address.
  const third = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  for (let i = 0; i < 2; i++) await login({ email: third.email, password: 'wrong-password' }, {}, one.url);
  t.equal((await login({ email: third.email, password: third.password }, {}, one.url)).status, 201);
  for (let i = 0; i < 2; i++) t.equal((await login({ email: third.email, password: 'wrong-password' }, {}, two.url)).status, 401, 'counted from zero again');
});

t.test('failed logins per client address: past the budget 429 for any account from it, others unaffected', async (t) => {
  const env = { TRUST_PROXY: 'loopback', PANEL_LOGIN_FAILURES_PER_ACCOUNT: '1000', PANEL_LOGIN_FAILURES_PER_ADDRESS: '3' };
  const [one, two] = await twoWebs(t, env);
  const user = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
  for (let i = 0; i < 3; i++) {
    const res = await login({ email: `guess-${i}@example.org`, password: 'wrong-password' }, from('203.0.113.7'), i % 2 ? two.url : one.url);
    t.equal(res.status, 401, `failure ${i + 1}, a different address each time: 401`);
  }
  const limited = await login({ email: user.email, password: user.password }, from('203.0.113.7'), two.url);
  t.equal(limited.status, 429, 'a real account from that address: 429');
  t.ok(Number(limited.headers['retry-after']) >= 1);
  t.equal((await login({ email: user.email, password: user.password }, from('203.0.113.8'), one.url)).status, 201, 'from another address: signs in');
});

t.test('issue 37: wrong passwords from some addresses lock those addresses, not the account: the owner signs in from another', async (t) => {
  const env = { TRUST_PROXY: 'loopback', PANEL_LOGIN_FAILURES_PER_ACCOUNT: '3', PANEL_LOGIN_FAILURES_PER_ADDRESS: '1000' };
  const [one, two] = await twoWebs(t, env);
  const owner = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'owner' }]);
  const attackers = ['198.51.100.1', '198.51.100.2', '2001:db8:1:2::1'];
  for (const [n, ip] of attackers.entries()) {
    for (let i = 0; i < 3; i++) {
      const res = await login({ email: owner.email, password: `wrong-${i}` }, from(ip), (n + i) % 2 ? two.url : one.url);
      t.equal(res.status, 401, `${ip}, failure ${i + 1}: 401`);
    }
  }
  // 9 failures on the account, three times its budget of 3: the old lock on the account refused this.
  const home = await login({ email: owner.email, password: owner.password }, from('192.0.2.10'), one.url);
  t.equal(home.status, 201, `the right password from an address that has not failed signs in (${home.status} ${home.body.code ?? ''})`);
  for (const ip of [...attackers, '2001:db8:1:2:ffff::9']) {
    const res = await login({ email: owner.email, password: owner.password }, from(ip), two.url);
    t.equal(res.status, 429, `${ip}: 429 even with the right password${ip.endsWith('::9') ? ' (another address of a failing /64)' : ''}`);
    t.equal(res.body.code, 'rate_limit_exceeded');
    t.ok(Number(res.headers['retry-after']) >= 1 && Number(res.headers['retry-after']) <= 900, 'Retry-After within the window');
  }
  t.equal((await login({ email: owner.email, password: owner.password }, from('2001:db8:1:3::1'), two.url)).status, 201, 'another /64 signs in');
  t.equal((await login({ email: owner.email, password: 'wrong' }, from('192.0.2.10'), two.url)).status, 401, "the owner's address is not locked by the others' failures");
});

t.test('issue 37: a spray past the account total gives each address one attempt; an address that has not failed still signs in', async (t) => {
  const env = { TRUST_PROXY: 'loopback', PANEL_LOGIN_FAILURES_PER_ACCOUNT: '3', PANEL_LOGIN_FAILURES_PER_ACCOUNT_TOTAL: '4', PANEL_LOGIN_FAILURES_PER_ADDRESS: '1000' };
  const web = await otherWeb(t, env);
  const user = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'owner' }]);
  const guess = (ip: string, password = 'wrong-password') => login({ email: user.email, password }, from(ip), web.url);
  // Two addresses spend 2 failures each: the account's total of 4 is reached, no address is past its 3.
  for (const ip of ['198.51.100.21', '198.51.100.22']) for (let i = 0; i < 2; i++) t.equal((await guess(ip)).status, 401, `${ip}: 401`);
  t.equal((await guess('198.51.100.21')).status, 429, 'past the total, an address that failed has no further attempt (under its own 3)');
  t.equal((await guess('198.51.100.23')).status, 401, 'a new address has one attempt');
  t.equal((await guess('198.51.100.23')).status, 429, 'and only one');
  // Parallel attempts from one new address: one is checked.
  const burst = await Promise.all(Array.from({ length: 5 }, (_, i) => guess('198.51.100.24', `wrong-${i}`)));
  t.same(burst.map((r) => r.status).sort(), [401, 429, 429, 429, 429], 'five at once from a new address: one checked');
  t.equal((await guess('198.51.100.25', user.password)).status, 201, 'the right password from an address that has not failed signs in');
  t.equal((await guess('198.51.100.25', user.password)).status, 201, 'again: a success clears its address');
  t.equal((await guess('198.51.100.22', user.password)).status, 429, 'a failing address stays refused, the right password too');
});
