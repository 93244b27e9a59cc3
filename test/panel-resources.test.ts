import t from 'tap';
import { randomBytes } from 'node:crypto';
import { rawCall } from './helpers/auth-matrix.js';
import { testDatabases } from './helpers/databases.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { panelCast, panelHeaders } from './helpers/panel.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The instance's resources in the panel's /v1/private API (issue 30, docs/panel.md): API keys,
 * senders, domains (with a real DNS server on loopback for "verify now"), restrictions and the
 * instance's settings, against the real web app and Postgres: each route's answer, what each
 * role may do, another instance's ids, the conflict codes, the key shown once.
 */

const dbs = await testDatabases(t, 'panelres');
const pool = dbs.pool;
const dns = await startTestDnsServer(t);
const { url } = await startTestWeb(t, dbs, { env: { DNS_SERVERS: dns.address, DKIM_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') } });

const a = await makeTenant(pool);
const b = await makeTenant(pool);
const { owner, admin, viewer, ownerOfB, call } = await panelCast(url, pool, a, b);

const asB = (method: string, path: string, body?: unknown) => call(ownerOfB, method, path, body, b.slug);

t.test('API keys: owner lists, creates (the full key once, and it works), revokes; admin and viewer cannot', async (t) => {
  const created = await call(owner, 'POST', '/v1/private/keys', { scopes: ['senders:read'], allowed_cidrs: ['127.0.0.1', '10.0.0.0/8'], expires_at: '2099-01-01T00:00:00Z' });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.equal(created.headers.get('cache-control'), 'no-store');
  t.match(created.body.key, new RegExp(`^crt\\.${created.body.key_id}\\.[A-Za-z0-9_-]{43}$`));
  t.same(created.body.allowed_cidrs, ['127.0.0.1/32', '10.0.0.0/8']);
  t.equal(created.body.expires_at, '2099-01-01T00:00:00.000Z');
  const used = await rawCall(url + '/v1/senders', { authorization: `Bearer ${created.body.key}`, 'x-instance-slug': a.slug });
  t.equal(used.status, 200, 'the key works on the public API');

  const list = await call(owner, 'GET', '/v1/private/keys');
  t.equal(list.status, 200);
  const listed = list.body.data.find((k: { key_id: string }) => k.key_id === created.body.key_id);
  t.same(Object.keys(listed).sort(), ['allowed_cidrs', 'created_at', 'expires_at', 'key_id', 'revoked_at', 'scopes']);
  t.notOk(JSON.stringify(list.body).includes(created.body.key.split('.')[2]), 'the listing never shows the secret');
  t.ok(list.body.data.some((k: { key_id: string }) => k.key_id === a.keyId), "the instance's other keys are listed");
  t.notOk(list.body.data.some((k: { key_id: string }) => k.key_id === b.keyId), "another instance's are not");

  t.equal((await call(owner, 'POST', '/v1/private/keys', { scopes: [] })).body.code, 'api_key_scope_required');
  const unknown = await call(owner, 'POST', '/v1/private/keys', { scopes: ['everything'] });
  t.equal(unknown.status, 422, 'an unknown scope: validation');
  const badNet = await call(owner, 'POST', '/v1/private/keys', { scopes: ['mail:read'], allowed_cidrs: ['not-a-network'] });
  t.equal(badNet.status, 400);
  t.equal(badNet.body.code, 'invalid_cidr');

  for (const [who, token] of [['admin', admin], ['viewer', viewer]] as const) {
    t.equal((await call(token, 'GET', '/v1/private/keys')).status, 403, `${who} cannot list keys`);
    t.equal((await call(token, 'POST', '/v1/private/keys', { scopes: ['mail:read'] })).status, 403, `${who} cannot create one`);
    t.equal((await call(token, 'DELETE', `/v1/private/keys/${created.body.key_id}`)).status, 403, `${who} cannot revoke one`);
  }

  const foreign = await call(owner, 'DELETE', `/v1/private/keys/${b.keyId}`);
  t.equal(foreign.status, 404);
  t.equal(foreign.body.code, 'api_key_not_found');
  t.equal((await rawCall(url + '/v1/senders', b.headers)).status, 200, "B's key still works");

  const revoked = await call(owner, 'DELETE', `/v1/private/keys/${created.body.key_id}`);
  t.equal(revoked.status, 200);
  t.equal(revoked.body.key_id, created.body.key_id);
  t.equal((await rawCall(url + '/v1/senders', { authorization: `Bearer ${created.body.key}`, 'x-instance-slug': a.slug })).status, 401, 'revoked: 401');
  const after = (await call(owner, 'GET', '/v1/private/keys')).body.data.find((k: { key_id: string }) => k.key_id === created.body.key_id);
  t.equal(after.revoked_at, revoked.body.revoked_at, 'still listed, with revoked_at');
});

t.test('senders: viewer lists; admin creates (409 sender_already_exists) and turns consent on and off', async (t) => {
  const email = `news@${randomBytes(3).toString('hex')}.example.com`;
  t.equal((await call(viewer, 'POST', '/v1/private/senders', { email, name: 'News' })).status, 403, 'a viewer cannot create');
  const created = await call(admin, 'POST', '/v1/private/senders', { email, name: 'News', is_consent_required: true });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.match(created.body, { email_address: email, name: 'News', is_consent_required: true, domain_is_verified: false, domain_created: true });
  const again = await call(admin, 'POST', '/v1/private/senders', { email: email.toUpperCase(), name: 'Other' });
  t.equal(again.status, 409);
  t.equal(again.body.code, 'sender_already_exists');
  t.equal((await call(admin, 'POST', '/v1/private/senders', { email: 'not-an-address', name: 'X' })).body.code, 'invalid_email');

  const list = await call(viewer, 'GET', '/v1/private/senders');
  t.equal(list.status, 200);
  t.ok(list.body.pagination, 'a page');
  t.ok(list.body.data.some((s: { id: number }) => s.id === created.body.id));

  t.equal((await call(viewer, 'PATCH', `/v1/private/senders/${created.body.id}`, { is_consent_required: false })).status, 403, 'a viewer cannot change it');
  const off = await call(admin, 'PATCH', `/v1/private/senders/${created.body.id}`, { is_consent_required: false });
  t.equal(off.status, 200);
  t.equal(off.body.is_consent_required, false);
  const read = await rawCall(url + `/v1/senders/${created.body.id}`, a.headers);
  t.equal(read.body.is_consent_required, false, 'the public API sees the change');

  const foreign = await asB('PATCH', `/v1/private/senders/${created.body.id}`, { is_consent_required: true });
  t.equal(foreign.status, 404);
  t.equal(foreign.body.code, 'sender_not_found');
  t.notOk((await asB('GET', '/v1/private/senders')).body.data.some((s: { id: number }) => s.id === created.body.id), "not in B's listing");
});

t.test('domains: add with its records, verify now through DNS_SERVERS, rotate DKIM; roles; 409; another instance 404', async (t) => {
  const name = `${randomBytes(4).toString('hex')}.example.net`;
  t.equal((await call(viewer, 'POST', '/v1/private/domains', { domain: name })).status, 403, 'a viewer cannot add');
  const added = await call(admin, 'POST', '/v1/private/domains', { domain: name.toUpperCase() });
  t.equal(added.status, 201, JSON.stringify(added.body));
  t.equal(added.body.domain, name);
  t.same(added.body.dns_records.map((r: { check: string }) => r.check).sort(), ['dkim', 'dmarc', 'mx', 'spf']);
  t.ok(added.body.dns_records.every((r: { status: string }) => r.status === 'pending'), 'all pending');
  t.equal(
    added.body.dns_records.find((r: { check: string }) => r.check === 'dmarc').value,
    `v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:dmarc@bounces.${name}`,
    'the suggested DMARC record sends aggregate reports to the return-path host',
  );
  t.notMatch(JSON.stringify(added.body), /PRIVATE KEY/, 'never a private key');
  const conflict = await call(admin, 'POST', '/v1/private/domains', { domain: name });
  t.equal(conflict.status, 409);
  t.equal(conflict.body.code, 'domain_already_exists');
  t.equal((await call(admin, 'POST', '/v1/private/domains', { domain: 'not a domain' })).body.code, 'invalid_domain');

  const id = added.body.id;
  const one = await call(viewer, 'GET', `/v1/private/domains/${id}`);
  t.equal(one.status, 200);
  t.same(one.body.dns_records, added.body.dns_records, 'the same records on read');
  t.ok((await call(viewer, 'GET', '/v1/private/domains')).body.data.some((d: { id: number }) => d.id === id), 'listed');

  t.equal((await call(viewer, 'POST', `/v1/private/domains/${id}/verify`)).status, 403, 'a viewer cannot verify');
  const unpublished = await call(admin, 'POST', `/v1/private/domains/${id}/verify`);
  t.equal(unpublished.status, 200);
  t.equal(unpublished.body.is_verified, false);
  t.ok(unpublished.body.dns_checked_at, 'DNS was asked');
  for (const r of added.body.dns_records) {
    if (r.type === 'MX') dns.mx(r.name, r.value.split(' ')[1]);
    else dns.txt(r.name, r.value);
  }
  const verified = await call(admin, 'POST', `/v1/private/domains/${id}/verify`);
  t.equal(verified.status, 200);
  t.equal(verified.body.is_verified, true, JSON.stringify(verified.body.dns_records));
  t.ok(verified.body.dns_records.every((r: { status: string }) => r.status === 'approved'), 'every record approved: its live state');

  await dns.stop();
  const down = await call(admin, 'POST', `/v1/private/domains/${id}/verify`);
  await dns.start();
  t.equal(down.status, 503, 'the resolver does not answer: 503');
  t.equal(down.body.code, 'service_unavailable');
  t.equal((await call(viewer, 'GET', `/v1/private/domains/${id}`)).body.is_verified, true, 'and nothing changed');

  t.equal((await call(viewer, 'POST', `/v1/private/domains/${id}/rotate-dkim`)).status, 403, 'a viewer cannot rotate');
  const rotated = await call(admin, 'POST', `/v1/private/domains/${id}/rotate-dkim`);
  t.equal(rotated.status, 200);
  const dkim = rotated.body.dns_records.filter((r: { check: string }) => r.check === 'dkim');
  t.equal(dkim.length, 2, 'both DKIM records: the old one signs until the new one verifies');
  t.same(dkim.map((r: { status: string }) => r.status).sort(), ['approved', 'pending']);

  for (const [method, path] of [['GET', `/v1/private/domains/${id}`], ['POST', `/v1/private/domains/${id}/verify`], ['POST', `/v1/private/domains/${id}/rotate-dkim`]]) {
    const res = await asB(method!, path!);
    t.equal(res.status, 404, `${method} ${path} as B`);
    t.equal(res.body.code, 'domain_not_found');
    t.notOk(JSON.stringify(res.body).includes(name), 'nothing of the domain');
  }
});

t.test('restrictions: viewer lists the history; admin adds and lifts (kept, with deleted_at); another instance 404', async (t) => {
  const recipient = `held-${randomBytes(3).toString('hex')}@example.org`;
  t.equal((await call(viewer, 'POST', '/v1/private/restrictions', { recipient })).status, 403, 'a viewer cannot add');
  const added = await call(admin, 'POST', '/v1/private/restrictions', { recipient: recipient.toUpperCase(), reason: 'hard_bounce' });
  t.equal(added.status, 201, JSON.stringify(added.body));
  t.match(added.body, { recipient, reason: 'hard_bounce', deleted_at: null, scope: null });
  const again = await call(admin, 'POST', '/v1/private/restrictions', { recipient });
  t.equal(again.status, 200, 'one in force already: that one, 200');
  t.equal(again.body.id, added.body.id);
  t.equal(again.body.reason, 'hard_bounce', 'its first cause kept');
  t.equal((await call(admin, 'POST', '/v1/private/restrictions', { recipient: 'nope' })).status, 422);

  const foreign = await asB('DELETE', `/v1/private/restrictions/${added.body.id}`);
  t.equal(foreign.status, 404);
  t.equal(foreign.body.code, 'restriction_not_found');
  t.equal((await call(viewer, 'DELETE', `/v1/private/restrictions/${added.body.id}`)).status, 403, 'a viewer cannot lift');
  const lifted = await call(admin, 'DELETE', `/v1/private/restrictions/${added.body.id}`);
  t.equal(lifted.status, 200);
  t.ok(lifted.body.deleted_at, 'lifted: deleted_at set');
  t.equal((await call(admin, 'DELETE', `/v1/private/restrictions/${added.body.id}`)).body.code, 'restriction_not_found', 'lifting twice: 404');

  const relisted = await call(admin, 'POST', '/v1/private/restrictions', { recipient });
  t.equal(relisted.status, 201, 'restricted again: a new row');
  const list = await call(viewer, 'GET', `/v1/private/restrictions?recipient=${encodeURIComponent(recipient)}`);
  t.equal(list.status, 200);
  t.same(list.body.data.map((r: { id: number; deleted_at: string | null }) => [r.id, r.deleted_at === null]), [[relisted.body.id, true], [added.body.id, false]], 'history kept, newest first');
  const publicList = await rawCall(url + `/v1/mail-restrictions?recipient=${encodeURIComponent(recipient)}`, { ...a.headers, authorization: `Bearer ${(await makeTenantKey())}` });
  t.same(publicList.body.data, list.body.data, 'the same rows as the public listing');
  t.same((await asB('GET', `/v1/private/restrictions?recipient=${encodeURIComponent(recipient)}`)).body.data, [], "B sees none of A's");
});

/** A key of A with mail:read, made through the panel (the fixture's key lacks that scope). */
async function makeTenantKey(): Promise<string> {
  return (await call(owner, 'POST', '/v1/private/keys', { scopes: ['mail:read'] })).body.key;
}

t.test('instance settings: any member reads them; admin sets limits; only the owner sets the IP allow list', async (t) => {
  const read = await call(viewer, 'GET', '/v1/private/instance');
  t.equal(read.status, 200);
  t.same(Object.keys(read.body).sort(), ['allowed_cidrs', 'created_at', 'dns_override', 'enabled', 'monthly_quota', 'name', 'send_burst', 'send_rate_per_second', 'slug', 'tz', 'updated_at']);
  t.equal(read.body.dns_override, false, 'PANEL_DNS_OVERRIDE is off by default');
  t.equal(read.body.slug, a.slug);
  t.equal((await call(ownerOfB, 'GET', '/v1/private/instance', undefined, b.slug)).body.slug, b.slug, 'X-Instance-Slug names the instance');

  t.equal((await call(viewer, 'PATCH', '/v1/private/instance', { send_burst: 5 })).status, 403, 'a viewer cannot set limits');
  const limited = await call(admin, 'PATCH', '/v1/private/instance', { send_rate_per_second: 2.5, send_burst: 5, monthly_quota: 1000 });
  t.equal(limited.status, 200, JSON.stringify(limited.body));
  t.match(limited.body, { send_rate_per_second: 2.5, send_burst: 5, monthly_quota: 1000 });
  const partial = await call(admin, 'PATCH', '/v1/private/instance', { monthly_quota: null });
  t.match(partial.body, { send_rate_per_second: 2.5, send_burst: 5, monthly_quota: null }, 'absent fields unchanged, null removes');
  t.equal((await call(admin, 'PATCH', '/v1/private/instance', { send_burst: 0 })).status, 422, 'burst 0: validation');
  t.equal((await call(admin, 'PATCH', '/v1/private/instance', {})).status, 422, 'nothing to change: validation');
  const bAfter = await call(ownerOfB, 'GET', '/v1/private/instance', undefined, b.slug);
  t.equal(bAfter.body.send_burst, null, "B's limits untouched");

  t.equal((await call(admin, 'PUT', '/v1/private/instance/ip-allow-list', { allowed_cidrs: ['10.0.0.0/8'] })).status, 403, 'an admin cannot set the allow list');
  const bad = await call(owner, 'PUT', '/v1/private/instance/ip-allow-list', { allowed_cidrs: ['10.0.0.0/8', 'nope'] });
  t.equal(bad.body.code, 'invalid_cidr');
  const fenced = await call(owner, 'PUT', '/v1/private/instance/ip-allow-list', { allowed_cidrs: ['10.0.0.0/8'] });
  t.equal(fenced.status, 200);
  t.same(fenced.body.allowed_cidrs, ['10.0.0.0/8']);
  const refused = await rawCall(url + '/v1/senders', a.headers);
  t.equal(refused.status, 403, 'the API key from loopback is now refused');
  t.equal(refused.body.code, 'ip_not_allowed');
  t.equal((await call(viewer, 'GET', '/v1/private/instance')).status, 200, 'panel sessions are not bound by it');
  const open = await call(owner, 'PUT', '/v1/private/instance/ip-allow-list', { allowed_cidrs: [] });
  t.same(open.body.allowed_cidrs, []);
  t.equal((await rawCall(url + '/v1/senders', a.headers)).status, 200, 'an empty list: every address again');
});

t.test('the operator override: 403 dns_override_disabled by default; with PANEL_DNS_OVERRIDE=on the owner sets checks', async (t) => {
  const added = await call(admin, 'POST', '/v1/private/domains', { domain: `override-${randomBytes(3).toString('hex')}.example` });
  const id = added.body.id;
  const off = await call(owner, 'PUT', `/v1/private/domains/${id}/checks`, { mx: 'approved' });
  t.equal(off.status, 403);
  t.equal(off.body.code, 'dns_override_disabled');

  const on = await startTestWeb(t, dbs, { env: { DNS_SERVERS: dns.address, PANEL_DNS_OVERRIDE: 'on' } });
  const callOn = (token: string, method: string, path: string, body?: unknown, slug = a.slug) => jsonCall(on.url, method, path, body, panelHeaders(token, slug));
  t.equal((await callOn(owner, 'GET', '/v1/private/instance')).body.dns_override, true, 'the settings say it');
  t.equal((await callOn(admin, 'PUT', `/v1/private/domains/${id}/checks`, { mx: 'approved' })).status, 403, 'an admin cannot');
  const half = await callOn(owner, 'PUT', `/v1/private/domains/${id}/checks`, { mx: 'approved', spf: 'approved' });
  t.equal(half.status, 200, JSON.stringify(half.body));
  t.match(half.body, { mx_status: 'approved', spf_status: 'approved', dkim_status: 'pending', dmarc_status: 'pending', is_verified: false, checks_overridden: true });
  const all = await callOn(owner, 'PUT', `/v1/private/domains/${id}/checks`, { dkim: 'approved', dmarc: 'approved' });
  t.equal(all.body.is_verified, true, 'verified once all four are approved');
  for (const [body, label] of [[{}, 'no check'], [{ mx: 'ok' }, 'an unknown state'], [{ ptr: 'approved' }, 'an unknown check']] as const) {
    t.equal((await callOn(owner, 'PUT', `/v1/private/domains/${id}/checks`, body)).status, 422, label);
  }
  const sandboxId = (await callOn(owner, 'GET', '/v1/private/domains')).body.data.find((d: { domain: string }) => d.domain.endsWith('.sandbox.cartero.test')).id;
  const sandbox = await callOn(owner, 'PUT', `/v1/private/domains/${sandboxId}/checks`, { mx: 'failed' });
  t.equal(sandbox.status, 409);
  t.equal(sandbox.body.code, 'sandbox_domain_managed');
  const other = await callOn(ownerOfB, 'PUT', `/v1/private/domains/${id}/checks`, { mx: 'failed' }, b.slug);
  t.equal(other.status, 404, "another instance's owner");
  t.equal(other.body.code, 'domain_not_found');
});
