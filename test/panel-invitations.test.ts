import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createUser } from '../domain/panel/users.js';
import { canonical, rawCall, type RawResponse } from './helpers/auth-matrix.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { startTestWeb } from './helpers/web.js';

/**
 * Issue 37: an owner could make any panel user a member of its instance by address (201), and an
 * unknown address answered 404 user_not_found, so addresses could be probed; the new "member" got
 * the instance's sandbox mail and could not leave. Now POST /v1/private/members invites: the same
 * answer for a known and an unknown address, no member until the invitee accepts in the panel
 * (GET /v1/private/invitations, accept, decline), and any member but the last owner may leave
 * (DELETE /v1/private/membership). Against the real web app and Postgres.
 */

const dbs = await testDatabases(t, 'panelinvite');
const pool = dbs.pool;
const { url } = await startTestWeb(t, dbs);

const a = await makeTenant(pool);
const b = await makeTenant(pool);
const ownerA = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'owner' }]);
const ownerB = await makePanelUser(pool, [{ instanceId: b.tenant.instanceId, role: 'owner' }]);
const tokenA = await panelLogin(url, ownerA);
const tokenB = await panelLogin(url, ownerB);

const call = (method: string, path: string, token: string, slug?: string, body?: unknown) => jsonCall(url, method, path, body, panelHeaders(token, slug));
const invite = (email: string, role = 'viewer', token = tokenA, slug = a.slug) =>
  rawCall(url + '/v1/private/members', panelHeaders(token, slug), { method: 'POST', body: { email, role } });
const isMemberOf = async (userId: number, instanceId: number) =>
  (await pool.query('SELECT 1 FROM panel_members WHERE user_id = $1 AND instance_id = $2', [userId, instanceId])).rowCount === 1;

/** The answer with what differs by nature blanked: the address asked for, the new id, the times. */
function shape(r: RawResponse, email: string) {
  const c = canonical(r);
  return {
    ...c,
    headers: { ...c.headers, 'content-length': '<n>', etag: '<etag>' },
    text: c.text
      .split(email)
      .join('<email>')
      .replace(/"id":\d+/, '"id":<id>')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>'),
  };
}

t.test('a known address (another instance’s owner) and an unknown one get the same answer: an invitation, no user id', async (t) => {
  // Same length, so not even Content-Length could tell them apart.
  const unknown = `user-${randomBytes(4).toString('hex')}@example.org`;
  t.equal(unknown.length, ownerB.email.length);
  const known = await invite(ownerB.email);
  const none = await invite(unknown);
  t.equal(known.status, 201, known.text);
  t.same(Object.keys(known.body).sort(), ['created_at', 'email', 'id', 'role', 'status', 'updated_at']);
  t.match(known.body, { email: ownerB.email, role: 'viewer', status: 'invited' });
  t.notOk(known.text.includes(`:${ownerB.id},`) || known.text.includes('user_id'), 'no user id in the answer');
  t.same(shape(none, unknown), shape(known, ownerB.email), 'byte for byte the same, but for the address, the id and the times');
  t.notOk(await isMemberOf(ownerB.id, a.tenant.instanceId), 'the known user is not made a member');
  const malformed = await invite('not-an-address');
  t.equal(malformed.status, 422, 'a malformed address is a validation error, known or not');
});

t.test('an invited user is not a member until it accepts; then it is one, with the role offered', async (t) => {
  const invitee = await makePanelUser(pool, [{ instanceId: b.tenant.instanceId, role: 'viewer' }]);
  const made = await invite(invitee.email.toUpperCase(), 'admin');
  t.equal(made.status, 201);
  const token = await panelLogin(url, invitee);
  const instances = await call('GET', '/v1/private/instances', token);
  t.same(instances.body.data.map((i: { slug: string }) => i.slug), [b.slug], 'A is not among its instances');
  const blocked = await call('GET', '/v1/private/members', token, a.slug);
  t.equal(blocked.status, 404, 'A is closed to it');
  t.equal(blocked.body.code, 'instance_not_found');

  const listed = await call('GET', '/v1/private/members', tokenA, a.slug);
  t.match(
    listed.body.data.find((m: { email: string }) => m.email.toLowerCase() === invitee.email),
    { id: made.body.id, status: 'invited', role: 'admin' },
    'the owner sees it as invited',
  );
  t.notOk(listed.body.data.some((m: { status: string; user_id?: number }) => m.status === 'member' && m.user_id === invitee.id), 'not as a member');

  const mine = await call('GET', '/v1/private/invitations', token);
  t.equal(mine.status, 200);
  t.same(mine.body.data.map((i: { id: number; instance: { slug: string }; role: string }) => [i.id, i.instance.slug, i.role]), [[made.body.id, a.slug, 'admin']]);
  t.same((await call('GET', '/v1/private/invitations', tokenA)).body.data, [], 'nobody else sees it (not even the owner who invited)');

  const accepted = await call('POST', `/v1/private/invitations/${made.body.id}/accept`, token);
  t.equal(accepted.status, 200, JSON.stringify(accepted.body));
  t.same(accepted.body, { slug: a.slug, name: accepted.body.name, role: 'admin', enabled: true });
  t.ok(await isMemberOf(invitee.id, a.tenant.instanceId), 'a member now');
  t.equal((await call('GET', '/v1/private/members', token, a.slug)).status, 200, 'its session reaches A at once');
  t.same((await call('GET', '/v1/private/invitations', token)).body.data, [], 'the invitation is used up');
  t.equal((await call('POST', `/v1/private/invitations/${made.body.id}/accept`, token)).status, 404, 'accepting twice: 404');
  const members = (await call('GET', '/v1/private/members', tokenA, a.slug)).body.data;
  t.match(members.find((m: { email: string }) => m.email === invitee.email), { user_id: invitee.id, status: 'member', role: 'admin' });
  t.equal(members.filter((m: { email: string }) => m.email.toLowerCase() === invitee.email).length, 1, 'listed once');
});

t.test('decline: the invitation is gone and nobody became a member', async (t) => {
  const invitee = await makePanelUser(pool);
  const made = await invite(invitee.email);
  const token = await panelLogin(url, invitee);
  const declined = await call('POST', `/v1/private/invitations/${made.body.id}/decline`, token);
  t.equal(declined.status, 204);
  t.notOk(await isMemberOf(invitee.id, a.tenant.instanceId));
  t.same((await call('GET', '/v1/private/invitations', token)).body.data, []);
  const accept = await call('POST', `/v1/private/invitations/${made.body.id}/accept`, token);
  t.equal(accept.status, 404, 'a declined invitation cannot be accepted');
  t.equal(accept.body.code, 'invitation_not_found');
  t.notOk((await call('GET', '/v1/private/members', tokenA, a.slug)).body.data.some((m: { email: string }) => m.email === invitee.email), 'not listed any more');
});

t.test('an invitation to an address nobody has shows to the user created later with it', async (t) => {
  const email = `later-${randomBytes(4).toString('hex')}@example.org`;
  const made = await invite(email, 'viewer');
  t.equal(made.status, 201);
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await createUser(pool, { email, password });
  const token = await panelLogin(url, { email, password });
  t.notOk(await isMemberOf(user.id, a.tenant.instanceId), 'not a member by being created');
  const mine = await call('GET', '/v1/private/invitations', token);
  t.same(mine.body.data.map((i: { id: number }) => i.id), [made.body.id]);
  t.equal((await call('POST', `/v1/private/invitations/${made.body.id}/accept`, token)).status, 200);
  t.ok(await isMemberOf(user.id, a.tenant.instanceId));
});

t.test('inviting again changes the role; a member already is 409 user_already_member; only an owner invites', async (t) => {
  const email = `again-${randomBytes(4).toString('hex')}@example.org`;
  const first = await invite(email, 'viewer');
  const second = await invite(email.toUpperCase(), 'owner');
  t.equal(second.status, 201);
  t.equal(second.body.id, first.body.id, 'the same invitation');
  t.equal(second.body.role, 'owner');
  const member = await invite(ownerA.email);
  t.equal(member.status, 409);
  t.equal(member.body.code, 'user_already_member');
  const viewer = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'admin' }]);
  const refused = await invite(email, 'viewer', await panelLogin(url, viewer));
  t.equal(refused.status, 403, 'an admin does not invite');
});

t.test('another user’s or another instance’s invitation id is 404 invitation_not_found and changes nothing', async (t) => {
  const invitee = await makePanelUser(pool);
  const inviteeToken = await panelLogin(url, invitee);
  const ofB = await invite(invitee.email, 'owner', tokenB, b.slug);
  t.equal(ofB.status, 201);
  const id = ofB.body.id as number;
  // Someone else trying to take it: A's owner (an owner, but not of B, and not the invitee).
  for (const action of ['accept', 'decline']) {
    const res = await call('POST', `/v1/private/invitations/${id}/${action}`, tokenA);
    t.equal(res.status, 404, `${action} of an invitation to someone else`);
    t.equal(res.body.code, 'invitation_not_found');
  }
  const cancel = await call('DELETE', `/v1/private/members/invitations/${id}`, tokenA, a.slug);
  t.equal(cancel.status, 404, "A's owner withdrawing B's invitation through A");
  t.equal(cancel.body.code, 'invitation_not_found');
  const missing = await call('POST', `/v1/private/invitations/${id + 100000}/accept`, inviteeToken);
  t.equal(missing.status, 404, 'an id that does not exist: the same 404');
  t.notOk(await isMemberOf(ownerA.id, b.tenant.instanceId), "A's owner did not get into B");
  t.same((await call('GET', '/v1/private/invitations', inviteeToken)).body.data.map((i: { id: number }) => i.id), [id], 'still pending for its invitee');

  // B's owner withdraws it: gone for the invitee.
  t.equal((await call('DELETE', `/v1/private/members/invitations/${id}`, tokenB, b.slug)).status, 204);
  t.same((await call('GET', '/v1/private/invitations', inviteeToken)).body.data, []);
  t.equal((await call('POST', `/v1/private/invitations/${id}/accept`, inviteeToken)).status, 404, 'a withdrawn invitation cannot be accepted');
});

t.test('any member may leave, at once for its sessions; the last owner may not (409 member_last_owner)', async (t) => {
  const c = await makeTenant(pool);
  const owner = await makePanelUser(pool, [{ instanceId: c.tenant.instanceId, role: 'owner' }]);
  const viewer = await makePanelUser(pool, [{ instanceId: c.tenant.instanceId, role: 'viewer' }, { instanceId: b.tenant.instanceId, role: 'viewer' }]);
  const ownerToken = await panelLogin(url, owner);
  const viewerToken = await panelLogin(url, viewer);
  const other = await panelLogin(url, viewer);

  const left = await call('DELETE', '/v1/private/membership', viewerToken, c.slug);
  t.equal(left.status, 204);
  t.notOk(await isMemberOf(viewer.id, c.tenant.instanceId));
  const after = await call('GET', '/v1/private/members', other, c.slug);
  t.equal(after.status, 404, 'its other session lost the instance at once');
  t.equal(after.body.code, 'instance_not_found');
  t.same((await call('GET', '/v1/private/instances', viewerToken)).body.data.map((i: { slug: string }) => i.slug), [b.slug], 'its other instance stays');
  t.equal((await call('DELETE', '/v1/private/membership', viewerToken, c.slug)).status, 404, 'leaving again: not a member, 404');

  const last = await call('DELETE', '/v1/private/membership', ownerToken, c.slug);
  t.equal(last.status, 409, 'the last owner');
  t.equal(last.body.code, 'member_last_owner');
  t.ok(await isMemberOf(owner.id, c.tenant.instanceId), 'still the owner');

  // With a second owner (invited, accepted), the first may go.
  const second = await makePanelUser(pool);
  const made = await call('POST', '/v1/private/members', ownerToken, c.slug, { email: second.email, role: 'owner' });
  t.equal((await call('POST', `/v1/private/invitations/${made.body.id}/accept`, await panelLogin(url, second))).status, 200);
  t.equal((await call('DELETE', '/v1/private/membership', ownerToken, c.slug)).status, 204, 'not the last owner any more');
  t.notOk(await isMemberOf(owner.id, c.tenant.instanceId));
});
