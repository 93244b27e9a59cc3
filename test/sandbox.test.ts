import t from 'tap';
import { randomBytes } from 'node:crypto';
import { syncSandboxDomain } from '../domain/domains/sandbox.js';
import { removeMember } from '../domain/panel/members.js';
import { setUserDisabled } from '../domain/panel/users.js';
import { chooseSender } from '../domain/senders/choose.js';
import { migratePostgres } from '../sql/migrate.js';
import { emptyTestDatabase } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { mailApi, messagesOf, startSendStack } from './helpers/send-stack.js';

/**
 * Every instance's sandbox (issue 30, docs/panel.md "The sandbox"), end to end: the sender
 * sandbox@<slug>.sandbox.cartero.test is listed by GET /v1/senders from the instance's creation,
 * sends over real SMTP to the mailbox simulator to the instance's members, answers 409
 * sandbox_relay_restricted for anyone else, and drops at send time a mail whose recipient stopped
 * being a member after acceptance. The panel marks it and refuses to verify or rotate it; a
 * domain with a key that has not verified is refused rotation with 409 domain_not_verified.
 */
const stack = await startSendStack(t, {
  label: 'sandbox',
  publicUrl: 'https://track.cartero.test',
  webEnv: { DKIM_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') },
});
const { dbs } = stack;
const pool = dbs.pool;
const a = await makeTenant(pool, { scopes: ['mail:send', 'mail:read', 'senders:read', 'domains:read'] });
const b = await makeTenant(pool, { scopes: ['mail:send', 'senders:read'] });
const api = mailApi(stack.url, a.headers);
const sandbox = `sandbox@${a.slug}.sandbox.cartero.test`;

const owner = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'owner' }]);
const leaving = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
const disabled = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
await setUserDisabled(pool, disabled.email, true);
const ofB = await makePanelUser(pool, [{ instanceId: b.tenant.instanceId, role: 'owner' }]);
const ownerToken = await panelLogin(stack.url, owner);
const panel = (method: string, path: string, body?: unknown) => jsonCall(stack.url, method, path, body, panelHeaders(ownerToken, a.slug));

const messages = async () => Number((await pool.query('SELECT count(*) AS n FROM messages WHERE instance_id = $1', [a.tenant.instanceId])).rows[0].n);
const text = { subject: 'Trying Cartero', text: 'Hello from the sandbox' };

t.test('a new instance lists its sandbox sender, verified, on its own domain', async (t) => {
  const list = await api.call('GET', '/v1/senders');
  t.equal(list.status, 200);
  const [first] = list.body.data;
  t.match(first, { name: 'Sandbox', email_address: sandbox, domain_is_verified: true, is_consent_required: false });
  t.same(Object.keys(first).sort(), ['created_at', 'domain_id', 'domain_is_verified', 'email_address', 'id', 'is_consent_required', 'name', 'updated_at'], 'the spec’s Sender fields, no more');
  const verified = await api.call('GET', '/v1/senders?is_domain_verified=true');
  t.ok(verified.body.data.some((s: { email_address: string }) => s.email_address === sandbox), 'among the verified');
  const status = await api.call('GET', `/v1/domains/${a.slug}.sandbox.cartero.test/status`);
  t.same(status.body, { id: first.domain_id, domain: `${a.slug}.sandbox.cartero.test`, is_verified: true });
  const ofOther = await jsonCall(stack.url, 'GET', '/v1/senders', undefined, b.headers);
  t.same(ofOther.body.data.map((s: { email_address: string }) => s.email_address), [`sandbox@${b.slug}.sandbox.cartero.test`], 'each instance its own');
});

let toOwner = '';
let toLeaving = '';

t.test('to anyone but the instance’s enabled members: 409 sandbox_relay_restricted, nothing accepted', async (t) => {
  const before = await messages();
  for (const [label, to] of [
    ['an outsider', [{ email: 'someone@example.org' }]],
    ['a member and an outsider', [{ email: owner.email }, { email: 'someone@example.org' }]],
    ["another instance's member", [{ email: ofB.email }]],
    ['a disabled user', [{ email: disabled.email }]],
  ] as const) {
    const res = await api.send({ from: sandbox, to, ...text });
    t.equal(res.status, 409, label);
    t.equal(res.body.code, 'sandbox_relay_restricted', label);
    t.notOk(res.body.detail.includes(owner.email), `${label}: a member is not named as refused`);
  }
  const outsider = await api.send({ from: sandbox, to: [{ email: 'someone@example.org' }], ...text });
  t.match(outsider.body.detail, /someone@example\.org/, 'the refused address is named');
  t.equal(await messages(), before, 'no message accepted');
  const other = await jsonCall(stack.url, 'POST', '/v1/mails/send', { from: `sandbox@${b.slug}.sandbox.cartero.test`, to: [{ email: owner.email }], ...text }, b.headers);
  t.equal(other.status, 409, "B's sandbox does not send to A's member either");

  const ok = await api.send({ from: sandbox, to: [{ email: owner.email.toUpperCase() }], ...text });
  t.equal(ok.status, 202, JSON.stringify(ok.body));
  toOwner = ok.body.mails[0].mail_id;
  const second = await api.send({ from: 'Sandbox@' + `${a.slug}.sandbox.cartero.test`.toUpperCase(), to: [{ email: leaving.email }], ...text });
  t.equal(second.status, 202, 'a member of any role; the from address in any case');
  toLeaving = second.body.mails[0].mail_id;
});

t.test('sent over SMTP to a member; dropped at send time once the recipient is no longer a member', async (t) => {
  await removeMember(a.tenant.instanceId, pool, leaving.id);
  stack.spawnWorker();
  const sent = await api.waitFinal(toOwner);
  t.equal(sent.status, 3, 'sent');
  const [stored] = messagesOf(stack.mailboxDir, toOwner);
  t.ok(stored, 'in the mailbox');
  t.match(stored!.headers.find(([name]) => name === 'from')?.[1], sandbox, 'from the sandbox sender');
  t.match(stored!.headers.find(([name]) => name === 'x-simulator-rcpt-to')?.[1] ?? '', owner.email, 'to the member');
  const dropped = await api.waitFinal(toLeaving);
  t.equal(dropped.status, 4, 'dropped');
  const logs = await api.logs(toLeaving);
  t.ok(logs.some((l: { reason: string }) => l.reason === 'sandbox_relay_restricted'), JSON.stringify(logs));
  t.same(messagesOf(stack.mailboxDir, toLeaving), [], 'never sent');
});

t.test('an invited address is no member: no sandbox mail until it accepts (issue 37)', async (t) => {
  // A known user (another instance's owner) and an address nobody has: both only invited.
  const invitedUser = await panel('POST', '/v1/private/members', { email: ofB.email, role: 'viewer' });
  t.equal(invitedUser.status, 201, JSON.stringify(invitedUser.body));
  t.equal(invitedUser.body.status, 'invited');
  const nobody = `nobody-${randomBytes(3).toString('hex')}@example.org`;
  t.equal((await panel('POST', '/v1/private/members', { email: nobody, role: 'viewer' })).status, 201);
  const before = await messages();
  for (const to of [ofB.email, nobody]) {
    const refused = await api.send({ from: sandbox, to: [{ email: to }], ...text });
    t.equal(refused.status, 409, `${to}: invited, not accepted`);
    t.equal(refused.body.code, 'sandbox_relay_restricted');
  }
  t.equal(await messages(), before, 'nothing accepted for them');

  const tokenOfB = await panelLogin(stack.url, ofB);
  const accepted = await jsonCall(stack.url, 'POST', `/v1/private/invitations/${invitedUser.body.id}/accept`, undefined, panelHeaders(tokenOfB));
  t.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const ok = await api.send({ from: sandbox, to: [{ email: ofB.email }], ...text });
  t.equal(ok.status, 202, 'accepted: a member, so the sandbox sends to it');
  const sent = await api.waitFinal(ok.body.mails[0].mail_id);
  t.equal(sent.status, 3, 'sent');
  t.ok(messagesOf(stack.mailboxDir, ok.body.mails[0].mail_id)[0], 'in the mailbox');
});

t.test('mails to people who have not consented (forms, double opt-in) never come from the sandbox', async (t) => {
  const c = await makeTenant(pool);
  const alone = await chooseSender(c.tenant, pool, null);
  t.match(alone, { reason: /no sender with a verified domain/ }, 'not chosen by default, even when it is the only sender');
  const sandboxId = (await jsonCall(stack.url, 'GET', '/v1/senders', undefined, c.headers)).body.data[0].id;
  t.match(await chooseSender(c.tenant, pool, sandboxId), { reason: /sandbox/ }, 'nor when named');
  const [real] = await makeSenders(pool, c.tenant, { domain: 'real.example', senders: [{ email: 'hello', name: 'Hello' }] });
  t.match(await chooseSender(c.tenant, pool, null), { id: real }, 'a real verified sender is');
});

t.test('the panel marks the sandbox and refuses to verify or rotate it; rotation waits for verification', async (t) => {
  const senders = await panel('GET', '/v1/private/senders');
  t.equal(senders.status, 200);
  const mine = senders.body.data.find((s: { email_address: string }) => s.email_address === sandbox);
  t.equal(mine.is_sandbox, true);
  const [plainId] = await makeSenders(pool, a.tenant, { domain: 'plain.example', senders: [{ email: 'news', name: 'News' }] });
  t.equal((await panel('GET', '/v1/private/senders')).body.data.find((s: { id: number }) => s.id === plainId).is_sandbox, false);

  const domain = await panel('GET', `/v1/private/domains/${mine.domain_id}`);
  t.match(domain.body, { is_sandbox: true, is_verified: true, checks_overridden: true, dkim_selector: null });
  for (const step of ['verify', 'rotate-dkim']) {
    const res = await panel('POST', `/v1/private/domains/${mine.domain_id}/${step}`);
    t.equal(res.status, 409, step);
    t.equal(res.body.code, 'sandbox_domain_managed', step);
  }
  t.match((await panel('GET', `/v1/private/domains/${mine.domain_id}`)).body, { is_verified: true, dkim_selector: null }, 'unchanged');

  const added = await panel('POST', '/v1/private/domains', { domain: 'fresh.example' });
  t.equal(added.status, 201);
  t.equal(added.body.is_sandbox, false);
  const early = await panel('POST', `/v1/private/domains/${added.body.id}/rotate-dkim`);
  t.equal(early.status, 409);
  t.equal(early.body.code, 'domain_not_verified');
  t.equal((await panel('GET', `/v1/private/domains/${added.body.id}`)).body.dns_records.filter((r: { check: string }) => r.check === 'dkim').length, 1, 'no second key');
});

t.test('SANDBOX_DOMAIN changed: release renames every sandbox and its sender', async (t) => {
  // An instance that has the new name as a domain of its own: its sandbox stays, the release does not fail.
  const e = await makeTenant(pool);
  await makeSenders(pool, e.tenant, { domain: `${e.slug}.try.mail.example`, senders: [{ email: 'own', name: 'Own' }] });
  await syncSandboxDomain(pool, 'try.mail.example');
  const ofE = (await jsonCall(stack.url, 'GET', '/v1/senders', undefined, e.headers)).body.data.map((s: { email_address: string }) => s.email_address);
  t.same(ofE, [`sandbox@${e.slug}.sandbox.cartero.test`, `own@${e.slug}.try.mail.example`], 'kept as it was beside its own domain');
  const list = await api.call('GET', '/v1/senders');
  t.equal(list.body.data[0].email_address, `sandbox@${a.slug}.try.mail.example`);
  t.equal((await api.call('GET', `/v1/domains/${a.slug}.try.mail.example/status`)).body.is_verified, true);
  const d = await makeTenant(pool);
  t.equal((await jsonCall(stack.url, 'GET', '/v1/senders', undefined, d.headers)).body.data[0].email_address, `sandbox@${d.slug}.try.mail.example`, 'and new instances get it');
  await syncSandboxDomain(pool, 'sandbox.cartero.test');
  t.equal((await api.call('GET', '/v1/senders')).body.data[0].email_address, sandbox, 'and back');
});

t.test('an instance made before migration 027 gets its sandbox when the database is migrated', async (t) => {
  const old = await emptyTestDatabase(t, 'sandboxupgrade');
  await migratePostgres(old.pool, { through: '026' });
  await old.pool.query("INSERT INTO instances (slug, name) VALUES ('before', 'Before')");
  const upgrade = await migratePostgres(old.pool);
  t.ok(upgrade.applied.includes('027_sandbox.sql'));
  const { rows } = await old.pool.query(
    'SELECT s.name, s.email_address, d.is_verified, d.is_sandbox FROM senders s JOIN domains d ON d.id = s.domain_id JOIN instances i ON i.id = s.instance_id WHERE i.slug = $1',
    ['before'],
  );
  t.same(rows, [{ name: 'Sandbox', email_address: 'sandbox@before.sandbox.cartero.test', is_verified: true, is_sandbox: true }]);
});
