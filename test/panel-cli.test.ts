import t from 'tap';
import { failed, cliTest } from './helpers/cli-test.js';
import { jsonCall } from './helpers/http.js';
import { panelHeaders } from './helpers/panel.js';
import { oneJsonObject } from './helpers/spawn.js';

/**
 * The panel's people on the command line (issue 30): `cartero user create|reset-password|disable|
 * enable` and `cartero member add|remove`, each printing JSON, their refusals through the error
 * catalog (409 user_already_member among them), and their effect on signing in over HTTP.
 */

const { url, cli, binary, a, b, file, ok, dbs } = await cliTest(t, 'panelcli', ['senders:read']);

const password = 'correct horse battery staple';
const pwFile = file('pw.txt', `${password}\n`);
const signIn = (email: string, pw: string) => jsonCall(url, 'POST', '/v1/private/sessions', { email, password: pw }, {});

t.test('user create: JSON without the hash, the password stored as a self-describing scrypt hash', async (t) => {
  // The binary itself once: what an operator runs.
  const created = oneJsonObject(await binary('user', 'create', '--email', 'Ana@Example.org', '--password-file', pwFile));
  t.same(Object.keys(created).sort(), ['created_at', 'disabled_at', 'email', 'id', 'updated_at']);
  t.match(created, { email: 'Ana@Example.org', disabled_at: null });
  const { rows } = await dbs.pool.query<{ password_hash: string }>('SELECT password_hash FROM panel_users WHERE id = $1', [created.id]);
  t.match(rows[0]!.password_hash, /^\$scrypt\$ln=15,r=8,p=3\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/, 'scrypt, its parameters and salt in the hash');
  t.notMatch(rows[0]!.password_hash, password);
  failed(t, await cli('user', 'create', '--email', 'ana@example.ORG', '--password-file', pwFile), /^cartero user create: 409 user_already_exists: /m, 'the same address in another case');
  failed(t, await cli('user', 'create', '--email', 'short@example.org', '--password-file', file('short.txt', 'tiny\n')), /400 invalid_password: .*at least 12/, 'a short password');
  failed(t, await cli('user', 'create', '--email', 'x@example.org', '--password-file', '/nonexistent/pw'), /400 file_unreadable: --password-file/, 'no such file');
  failed(t, await cli('user', 'create', '--email', 'not-an-address', '--password-file', pwFile), /--email must be an email address/, 'not an address', 2);
});

t.test('member add: JSON, 409 user_already_member, 404 for an unknown user or instance; then the user signs in', async (t) => {
  t.equal((await signIn('ana@example.org', password)).status, 201, 'a user without membership may sign in (it sees no instance)');
  const added = await ok('member', 'add', '--instance', a.slug, '--email', 'ana@example.org', '--role', 'owner');
  t.match(added, { instance: a.slug, email: 'Ana@Example.org', role: 'owner', disabled: false });
  t.type(added.user_id, 'number');
  failed(t, await cli('member', 'add', '--instance', a.slug, '--email', 'ANA@example.org', '--role', 'viewer'), /^cartero member add: 409 user_already_member: /m, 'a member already');
  failed(t, await cli('member', 'add', '--instance', a.slug, '--email', 'nobody@example.org', '--role', 'viewer'), /404 user_not_found: /, 'no such user');
  failed(t, await cli('member', 'add', '--instance', 'no-such-instance', '--email', 'ana@example.org', '--role', 'viewer'), /404 instance_not_found: /, 'no such instance');
  failed(t, await cli('member', 'add', '--instance', a.slug, '--email', 'ana@example.org', '--role', 'root'), /--role must be one of viewer, admin, owner/, 'an unknown role', 2);
  t.match(await ok('member', 'add', '--instance', b.slug, '--email', 'ana@example.org', '--role', 'viewer'), { instance: b.slug, role: 'viewer' });

  const login = await signIn('ana@example.org', password);
  t.equal(login.status, 201);
  const mine = await jsonCall(url, 'GET', '/v1/private/instances', undefined, panelHeaders(login.body.token));
  t.same(
    mine.body.data.map((i: { slug: string; role: string }) => `${i.slug}:${i.role}`).sort(),
    [`${a.slug}:owner`, `${b.slug}:viewer`].sort(),
  );
});

t.test('member remove: JSON; the last owner stays (409 member_last_owner)', async (t) => {
  failed(t, await cli('member', 'remove', '--instance', a.slug, '--email', 'ana@example.org'), /409 member_last_owner: /, 'the last owner');
  const removed = await ok('member', 'remove', '--instance', b.slug, '--email', 'ana@example.org');
  t.match(removed, { instance: b.slug, email: 'Ana@Example.org', role: 'viewer', removed: true });
  failed(t, await cli('member', 'remove', '--instance', b.slug, '--email', 'ana@example.org'), /404 member_not_found: /, 'not a member any more');
  const token = (await signIn('ana@example.org', password)).body.token;
  const res = await jsonCall(url, 'GET', '/v1/private/members', undefined, panelHeaders(token, b.slug));
  t.equal(res.status, 404, 'the removed instance is not found for it');
});

t.test('user reset-password: the new one signs in, the old one and the sessions made with it do not', async (t) => {
  const old = (await signIn('ana@example.org', password)).body.token;
  const newPw = file('new.txt', 'another long passphrase');
  const reset = await ok('user', 'reset-password', '--email', 'ana@example.org', '--password-file', newPw);
  t.match(reset, { email: 'Ana@Example.org' });
  t.ok(reset.sessions_revoked >= 1, `its sessions ended (${reset.sessions_revoked})`);
  t.equal((await jsonCall(url, 'GET', '/v1/private/instances', undefined, panelHeaders(old))).status, 401, 'a session from before: 401');
  t.equal((await signIn('ana@example.org', password)).status, 401, 'the old password: 401');
  t.equal((await signIn('ana@example.org', 'another long passphrase')).status, 201, 'the new one: 201');
  failed(t, await cli('user', 'reset-password', '--email', 'nobody@example.org', '--password-file', newPw), /404 user_not_found: /, 'no such user');
});

t.test('user disable revokes its sessions and refuses its logins; enable lets it in again', async (t) => {
  const token = (await signIn('ana@example.org', 'another long passphrase')).body.token;
  t.equal((await jsonCall(url, 'GET', '/v1/private/members', undefined, panelHeaders(token, a.slug))).status, 200);
  const live = await dbs.pool.query('SELECT 1 FROM panel_sessions s JOIN panel_users u ON u.id = s.user_id WHERE lower(u.email) = $1', ['ana@example.org']);
  t.ok(live.rowCount! >= 2, 'this session and the previous test\'s');
  const disabled = await ok('user', 'disable', '--email', 'ana@example.org');
  t.match(disabled, { email: 'Ana@Example.org', sessions_revoked: live.rowCount });
  const left = await dbs.pool.query('SELECT 1 FROM panel_sessions WHERE user_id = $1', [disabled.id]);
  t.equal(left.rowCount, 0, 'no session of the user is left');
  t.type(disabled.disabled_at, 'string');
  t.equal((await jsonCall(url, 'GET', '/v1/private/members', undefined, panelHeaders(token, a.slug))).status, 401, 'its session: 401 at once');
  const refused = await signIn('ana@example.org', 'another long passphrase');
  t.equal(refused.status, 401);
  t.equal(refused.body.code, 'invalid_credentials', 'the same refusal as a wrong password');
  const again = await ok('user', 'disable', '--email', 'ana@example.org');
  t.equal(again.disabled_at, disabled.disabled_at, 'disabling twice keeps the first date');
  t.match(await ok('user', 'enable', '--email', 'ana@example.org'), { disabled_at: null, sessions_revoked: 0 });
  t.equal((await signIn('ana@example.org', 'another long passphrase')).status, 201, 'enabled: signs in');
});
