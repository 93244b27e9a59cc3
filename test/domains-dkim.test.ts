import { randomBytes } from 'node:crypto';
import { promises as dnsPromises } from 'node:dns';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import t, { type Test } from 'tap';
import { compile } from '../domain/validation.js';
import { domainWithRecordsSchema } from '../api/schemas/domains.js';
import { dnsRecords, dnsSettings } from '../domain/domains/dns-records.js';
import { resolverLookups, verifyAllDomains, verifyDomain } from '../domain/domains/dns-verify.js';
import { createSender } from '../domain/senders/senders.js';
import { loadTenants } from '../domain/tenancy/instances.js';
import { loadConfig } from '../config/config.js';
import { projectRoot } from '../config/paths.js';
import { failed } from './helpers/cli-test.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, messagesOf, startSendStack } from './helpers/send-stack.js';
import { childEnv, cliRunner, oneJsonObject } from './helpers/spawn.js';

/**
 * Sending domains end to end (issue 17): `cartero domain add` makes a DKIM key, the records it
 * shows are published on a real DNS server on loopback (dns2, UDP and TCP), `domain verify` and
 * the scheduled verification resolve them through DNS_SERVERS, the worker signs every mail, and an
 * independent verifier (mailauth) checks the stored messages against the same DNS server.
 */
const PUBLIC_URL = 'https://cartero.test'; // RETURN_PATH_MX_HOST defaults to its host
const KEY = randomBytes(32).toString('hex');
const DOMAIN = 'signed.example';

const dns = await startTestDnsServer(t);
const stack = await startSendStack(t, { label: 'dkim', publicUrl: PUBLIC_URL });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'domains:read'] });
const api = mailApi(stack.url, a.headers);
const env = { DKIM_KEY_ENCRYPTION_KEY: KEY, DNS_SERVERS: dns.address, PUBLIC_URL };
const cli = cliRunner(t, childEnv({ DATABASE_URL: dbs.databaseUrl, ...env }, ['CLICKHOUSE_URL', 'PORT', 'DATA_DIR']));
stack.spawnWorker(env);
const settings = dnsSettings(loadConfig(env));
const lookups = resolverLookups([dns.address], { timeoutMs: 500, tries: 1 });
const record = compile(domainWithRecordsSchema, 'json');

// The independent verifier asks the same server through its own resolver.
const resolver = new dnsPromises.Resolver({ timeout: 1_000, tries: 1 });
resolver.setServers([dns.address]);
const verifyDkim = (raw: Buffer) => dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type as 'TXT') as Promise<any> });

/** Publishes what the domain record says to publish. */
function publish(records: any[]): void {
  for (const r of records) {
    if (r.type === 'MX') dns.mx(r.name, r.value.split(' ')[1]);
    else dns.txt(r.name, r.value);
  }
}
const checks = (d: any) => [d.mx_status, d.spf_status, d.dkim_status, d.dmarc_status];
const getDomain = async (id: number) => (await api.call('GET', `/v1/domains/${id}`)).body;

async function sendOne(t: Test, to = 'ann@example.org'): Promise<Buffer> {
  const r = await api.send({
    from: `news@${DOMAIN}`,
    to: [{ email: to }],
    subject: 'Signed',
    html: '<p>Hello {{email}} <a href="https://example.org/offer?a=1&amp;b=2">offer</a></p>',
    track_opens: true,
    track_clicks: true,
  });
  t.equal(r.status, 202, JSON.stringify(r.body));
  const mailId = r.body.mails[0].mail_id as string;
  t.equal((await api.waitFinal(mailId)).status, 3, 'sent');
  const files = messagesOf(stack.mailboxDir, mailId);
  t.equal(files.length, 1);
  return readFileSync(files[0]!.file);
}

t.test('the suggested DMARC record follows RETURN_PATH_SUBDOMAIN, and docs/domains.md shows the one produced', async (t) => {
  const pending = { domain: 'example.com', mx_status: 'pending', spf_status: 'pending', dmarc_status: 'pending' } as const;
  const dmarcOf = (s: typeof settings) => dnsRecords(pending, [], undefined, s).find((r) => r.check === 'dmarc')!;
  t.equal(dmarcOf({ ...settings, returnPathSubdomain: 'rp' }).value, 'v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:dmarc@rp.example.com');
  const byDefault = dmarcOf(dnsSettings(loadConfig({ PUBLIC_URL }))).value;
  t.equal(byDefault, 'v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:dmarc@bounces.example.com');
  t.ok(readFileSync(join(projectRoot, 'docs', 'domains.md'), 'utf8').includes(`\`${byDefault}\``), 'the docs show it');
});

let domainId = 0;
let firstSelector = '';

t.test('domain add: a DKIM key, only its public part shown; the records to publish, all pending', async (t) => {
  const added = oneJsonObject(await cli('domain', 'add', '--instance', a.slug, '--name', DOMAIN));
  domainId = added.id;
  record(added);
  t.match(added, { domain: DOMAIN, is_verified: false, return_path_domain: `bounces.${DOMAIN}`, checks_overridden: false, dns_checked_at: null });
  t.same(checks(added), ['pending', 'pending', 'pending', 'pending']);
  firstSelector = added.dkim_selector;
  const now = new Date();
  t.equal(firstSelector, `cartero${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`, 'selector cartero<yyyymm>');
  t.same(
    added.dns_records.map((r: any) => [r.check, r.type, r.name]),
    [
      ['dkim', 'TXT', `${firstSelector}._domainkey.${DOMAIN}`],
      ['mx', 'MX', `bounces.${DOMAIN}`],
      ['spf', 'TXT', `bounces.${DOMAIN}`],
      ['dmarc', 'TXT', `_dmarc.${DOMAIN}`],
    ],
  );
  t.match(added.dns_records[0].value, /^v=DKIM1; k=rsa; p=MII[A-Za-z0-9+/=]{300,}$/);
  t.equal(added.dns_records[1].value, '10 cartero.test');
  t.equal(added.dns_records[2].value, 'v=spf1 mx -all');
  t.equal(added.dns_records[3].value, `v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:dmarc@bounces.${DOMAIN}`, 'aggregate reports to the return-path host (issue 39)');
  const out = JSON.stringify(added);
  t.notMatch(out, /PRIVATE KEY/, 'no private key printed');
  // At rest the private key is sealed: no PEM, no DER of an RSA private key, in the row.
  const { rows } = await dbs.pool.query<{ enc: Buffer }>('SELECT private_key_enc AS enc FROM dkim_keys WHERE domain_id = $1', [domainId]);
  t.equal(rows.length, 1);
  t.notOk(rows[0]!.enc.includes('PRIVATE KEY'), 'not stored in clear');
  t.same(await getDomain(domainId), { ...added, dns_records: added.dns_records }, 'GET /v1/domains/{id} shows the same');
  await createSender(a.tenant, dbs.pool, { email: `news@${DOMAIN}`, name: 'News' });
  const refused = await api.send({ from: `news@${DOMAIN}`, to: [{ email: 'x@example.org' }], subject: 's', text: 't' });
  t.equal(refused.body.code, 'domain_sender_not_verified', 'not verified yet: 409');
});

t.test('sender create on a domain the instance lacks adds it with its DKIM key, as domain add does', async (t) => {
  const other = `implicit-${DOMAIN}`;
  const sender = oneJsonObject(await cli('sender', 'create', '--instance', a.slug, '--email', `news@${other}`, '--name', 'News'));
  t.equal(sender.domain_created, true);
  const shown = oneJsonObject(await cli('domain', 'show', '--instance', a.slug, '--name', other));
  t.match(shown.dkim_selector, /^cartero\d{6}/, 'a selector');
  t.match(shown.dns_records[0], { check: 'dkim', type: 'TXT', name: `${shown.dkim_selector}._domainkey.${other}` });
  t.match(shown.dns_records[0].value, /^v=DKIM1; k=rsa; p=MII/);
  const again = oneJsonObject(await cli('sender', 'create', '--instance', a.slug, '--email', `billing@${other}`, '--name', 'Billing'));
  t.equal(again.domain_created, false, 'a second sender on it adds nothing');
  const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM dkim_keys k JOIN domains d ON d.id = k.domain_id WHERE d.name = $1', [other]);
  t.equal(rows[0].n, 1, 'one key');
});

t.test('domain verify: nothing published stays pending; all published -> approved, verified', async (t) => {
  const before = await verifyDomain(a.tenant, dbs.pool, DOMAIN, lookups, settings);
  t.same(checks(before), ['pending', 'pending', 'pending', 'pending'], 'not yet published is not a failure');
  publish((await getDomain(domainId)).dns_records);
  const verified = oneJsonObject(await cli('domain', 'verify', '--instance', a.slug, '--name', DOMAIN));
  t.same(checks(verified), ['approved', 'approved', 'approved', 'approved']);
  t.equal(verified.is_verified, true);
  t.type(verified.dns_checked_at, 'string');
  t.ok(verified.dns_records.every((r: any) => r.status === 'approved'));
  const status = await api.call('GET', `/v1/domains/${DOMAIN}/status`);
  t.same(status.body, { id: domainId, domain: DOMAIN, is_verified: true });
});

t.test('a DMARC record without rua (published before issue 39, or the owner\'s own) still approves the check', async (t) => {
  const name = `_dmarc.${DOMAIN}`;
  const suggested = (await getDomain(domainId)).dns_records.find((r: any) => r.check === 'dmarc').value;
  for (const value of ['v=DMARC1; p=none; adkim=r; aspf=r', 'v=DMARC1; p=reject']) {
    dns.remove(name, 'TXT');
    dns.txt(name, value);
    const v = await verifyDomain(a.tenant, dbs.pool, DOMAIN, lookups, settings);
    t.match(v, { dmarc_status: 'approved', is_verified: true }, value);
  }
  dns.remove(name, 'TXT');
  dns.txt(name, 'v=DMARC1; rua=mailto:dmarc@bounces.signed.example');
  t.equal((await verifyDomain(a.tenant, dbs.pool, DOMAIN, lookups, settings)).dmarc_status, 'failed', 'a record without p= still fails: the test can tell');
  dns.remove(name, 'TXT');
  dns.txt(name, suggested);
  t.equal((await verifyDomain(a.tenant, dbs.pool, DOMAIN, lookups, settings)).dmarc_status, 'approved', 'the suggested record back');
});

t.test('every mail is DKIM-signed: mailauth verifies it (aligned with From); a tampered body fails', async (t) => {
  const raw = await sendOne(t);
  const text = raw.toString('utf8');
  t.match(text, /^Return-Path: <bounce\+[0-9A-Z]{26}\.[0-9a-f]+@bounces\.signed\.example>/m, 'return path on the return-path host');
  const unfolded = text.replace(/\r?\n[ \t]+/g, ' ');
  t.match(unfolded, new RegExp(`^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=${DOMAIN.replace('.', '\\.')}; q=dns/txt; s=${firstSelector};`, 'm'));
  t.match(text, /\/t\/c\//, 'links were rewritten for tracking before signing');
  const ok = await verifyDkim(raw);
  t.equal(ok.results.length, 1);
  t.match(ok.results[0], { signingDomain: DOMAIN, selector: firstSelector, status: { result: 'pass', aligned: DOMAIN } });
  const signed = /^DKIM-Signature:[^]*?\bh=([^;]+);/im.exec(text)![1]!.replace(/\s+/g, '').toLowerCase().split(':');
  for (const h of ['from', 'to', 'subject', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']) t.ok(signed.includes(h), `${h} signed`);

  const tampered = Buffer.from(text.replace('/t/c/', '/t/x/'));
  t.not(tampered.toString(), text);
  const bad = await verifyDkim(tampered);
  t.not(bad.results[0]?.status.result, 'pass', `tampered body: ${bad.results[0]?.status.result} (${bad.results[0]?.status.comment})`);
});

t.test('the DKIM record removed: the scheduled check fails the domain, sends answer 409', async (t) => {
  dns.remove(`${firstSelector}._domainkey.${DOMAIN}`);
  const run = await verifyAllDomains(dbs.pool, lookups, settings, (ids) => loadTenants(dbs.pool, ids));
  t.equal(run.unavailable, false);
  t.match(run.changed, [{ domain: DOMAIN, is_verified: false, dkim_status: 'failed', mx_status: 'approved' }], 'the change is reported');
  const d = await getDomain(domainId);
  t.same(checks(d), ['approved', 'approved', 'failed', 'approved']);
  t.equal(d.dns_records[0].status, 'failed');
  const r = await api.send({ from: `news@${DOMAIN}`, to: [{ email: 'x@example.org' }], subject: 's', text: 't' });
  t.equal(r.status, 409);
  t.equal(r.body.code, 'domain_sender_not_verified');
});

t.test('the resolver does not answer: "temporarily unavailable", exit non-zero, nothing changed', async (t) => {
  const before = await getDomain(domainId);
  await dns.stop();
  failed(t, await cli('domain', 'verify', '--instance', a.slug, '--name', DOMAIN), /DNS verification temporarily unavailable/, 'verify with the DNS server stopped');
  const run = await verifyAllDomains(dbs.pool, lookups, settings, (ids) => loadTenants(dbs.pool, ids));
  t.match(run, { unavailable: true, checked: 0 });
  t.same(await getDomain(domainId), before, 'state, check time and records unchanged');
  await dns.start();
});

t.test('rotate-dkim: both records shown; the old key signs until the new record verifies, then the new one', async (t) => {
  // The old record back: the domain verifies again with its first key.
  const first = (await getDomain(domainId)).dns_records[0];
  dns.txt(first.name, first.value);
  t.equal((await verifyDomain(a.tenant, dbs.pool, DOMAIN, lookups, settings)).is_verified, true);

  const rotated = oneJsonObject(await cli('domain', 'rotate-dkim', '--instance', a.slug, '--name', DOMAIN));
  record(rotated);
  const dkim = rotated.dns_records.filter((r: any) => r.check === 'dkim');
  t.equal(dkim.length, 2, 'both DKIM records shown');
  const [fresh, old] = dkim;
  t.equal(fresh.selector, `${firstSelector}-2`, 'a new selector');
  t.match(fresh, { status: 'pending', signing: false });
  t.match(old, { selector: firstSelector, status: 'approved', signing: true });
  t.not(fresh.value, old.value, 'a new key');
  t.equal(rotated.is_verified, true, 'still verified meanwhile');

  const before = await verifyDkim(await sendOne(t));
  t.match(before.results[0], { selector: firstSelector, status: { result: 'pass' } }, 'signed with the old key until the new record verifies');

  dns.txt(fresh.name, fresh.value);
  const v = await verifyDomain(a.tenant, dbs.pool, DOMAIN, lookups, settings);
  t.same(v.retired_selectors, [firstSelector], 'the old key retired once the new one verified');
  const after = await getDomain(domainId);
  t.same(after.dns_records.filter((r: any) => r.check === 'dkim').map((r: any) => [r.selector, r.status, r.signing]), [[fresh.selector, 'approved', true]]);
  t.equal(after.dkim_selector, fresh.selector);

  const signed = await verifyDkim(await sendOne(t));
  t.match(signed.results[0], { selector: fresh.selector, signingDomain: DOMAIN, status: { result: 'pass', aligned: DOMAIN } }, 'signed with the new key');
});

t.test('set-checks is an override: the schedule skips the domain until `domain verify` resolves it', async (t) => {
  const name = 'closed.example';
  await makeSenders(dbs.pool, a.tenant, { domain: name, senders: [{ email: 'ops', name: 'Ops' }] }); // set-checks: all approved, nothing in DNS
  const run = await verifyAllDomains(dbs.pool, lookups, settings, (ids) => loadTenants(dbs.pool, ids));
  t.notOk(run.changed.some((d) => d.domain === name), 'not checked by the schedule');
  const kept = (await api.call('GET', `/v1/domains/${name}/status`)).body;
  t.equal(kept.is_verified, true, 'still verified as the operator set it');
  const shown = await getDomain(kept.id);
  t.match(shown, { checks_overridden: true, dkim_selector: null });
  t.same(shown.dns_records.map((r: any) => r.check), ['mx', 'spf', 'dmarc'], 'no key, no DKIM record (rotate-dkim gives one)');
  const verified = await verifyDomain(a.tenant, dbs.pool, name, lookups, settings);
  t.match(verified, { is_verified: false, mx_status: 'failed', spf_status: 'failed', dkim_status: 'failed', dmarc_status: 'failed' }, 'resolved: approved records that are absent fail, and a domain without a key cannot pass DKIM');
  t.equal((await getDomain(kept.id)).checks_overridden, false, 'the schedule checks it again from now on');
});
