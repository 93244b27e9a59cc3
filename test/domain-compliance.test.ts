import { generateKeyPairSync, randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { createPurpose } from '../domain/consent/purposes.js';
import { createTerm } from '../domain/consent/terms.js';
import { insertDkimKey } from '../domain/domains/dkim-keys.js';
import { addDomain, setDomainChecks } from '../domain/domains/domains.js';
import { keyRing } from '../domain/domains/key-encryption.js';
import { createSender } from '../domain/senders/senders.js';
import { withTenant } from '../domain/tenancy/context.js';
import { findUnsubscribeTarget, unsubscribe } from '../domain/tracking/unsubscribe.js';
import { compile } from '../domain/validation.js';
import { domainComplianceSchema } from '../api/schemas/domains.js';
import { rawCall } from './helpers/auth-matrix.js';
import { testDatabases } from './helpers/databases.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

/**
 * GET /v1/domains/{domain_name}/compliance (issue 40, "Compliance of a domain"; docs/domains.md,
 * Compliance): every rule failing and passing through HTTP, against real Postgres and a real DNS
 * server on loopback, the data made by the same functions the service uses (acceptance of a
 * send with purposes, the unsubscribe of a link) or, where only time can make it (a report of
 * days ago, an unsubscribe left undone), written as the service would have stored it.
 */
const dbs = await testDatabases(t, 'compliance');
const dns = await startTestDnsServer(t);
const env = { DNS_SERVERS: dns.address };
const https = await startTestWeb(t, dbs, { env: { ...env, PUBLIC_URL: 'https://cartero.test' } });
// The same instance seen by a deployment whose PUBLIC_URL is http: its List-Unsubscribe links are too.
const plain = await startTestWeb(t, dbs, { env: { ...env, PUBLIC_URL: 'http://cartero.test' } });
const a = await makeTenant(dbs.pool, { scopes: ['domains:read', 'mail:send'] });
const b = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
const ring = keyRing(randomBytes(32).toString('hex'));
const valid = compile(domainComplianceSchema, 'json');

const GOOD = 'good.example';
const BAD = 'bad.example';
const WEAK = 'weak.example';
const DAY = 86_400_000;

async function compliance(name: string, url = https.url, headers = a.headers) {
  return rawCall(`${url}/v1/domains/${encodeURIComponent(name)}/compliance`, headers);
}
async function checksOf(t: Test, name: string, url = https.url): Promise<Record<string, { status: string; detail: string; applies_to: string[]; source: string }>> {
  const r = await compliance(name, url);
  t.equal(r.status, 200, `${name}: ${r.text.slice(0, 300)}`);
  valid(r.body);
  t.equal(r.body.domain, name);
  return Object.fromEntries(r.body.checks.map((c: any) => [c.rule, c]));
}

/** The check `rule` of `name`: its status `status` (`why`, said when given) and a detail that says `detail` (`how`). */
async function checkSays(t: Test, name: string, rule: string, status: string, detail: string, why?: string, how?: string): Promise<void> {
  const check = (await checksOf(t, name))[rule]!;
  t.equal(check.status, status, why ?? `${rule}: ${status}`);
  t.match(check.detail, detail, how ?? `${rule}: ${detail}`);
}

/** A domain of A, verified by the operator override so it may send, with a sender news@. */
async function domainWithSender(name: string, opts: { key?: 'generated' | number } = {}): Promise<number> {
  const d = await addDomain(a.tenant, dbs.pool, name, opts.key === 'generated' ? { ring } : {});
  if (typeof opts.key === 'number') {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: opts.key });
    const pair = { publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
    await withTenant(dbs.pool, a.tenant, (c) => insertDkimKey(a.tenant, c, ring, d.id, pair));
  }
  await setDomainChecks(a.tenant, dbs.pool, name, { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
  await createSender(a.tenant, dbs.pool, { email: `news@${name}`, name: 'News' });
  return d.id;
}

const goodId = await domainWithSender(GOOD, { key: 'generated' });
const badId = await domainWithSender(BAD, { key: 512 });
await domainWithSender(WEAK, { key: 1024 });
const keyOf = async (name: string) =>
  (await dbs.pool.query<{ selector: string; public_key: string }>(
    'SELECT k.selector, k.public_key FROM dkim_keys k JOIN domains d ON d.id = k.domain_id WHERE d.name = $1 AND d.instance_id = $2 ORDER BY k.id DESC LIMIT 1',
    [name, a.tenant.instanceId],
  )).rows[0]!;

// good.example publishes what its domain record shows; weak.example too, with strict SPF alignment
// and its reports sent elsewhere; bad.example publishes nothing.
for (const [name, dmarc] of [
  [GOOD, `v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:dmarc@bounces.${GOOD}`],
  [WEAK, 'v=DMARC1; p=reject; aspf=s; rua=mailto:reports@dmarc-analyser.example'],
] as const) {
  const key = await keyOf(name);
  dns.mx(`bounces.${name}`, 'cartero.test');
  dns.txt(`bounces.${name}`, 'v=spf1 mx -all');
  dns.txt(`${key.selector}._domainkey.${name}`, `v=DKIM1; k=rsa; p=${key.public_key}`);
  dns.txt(`_dmarc.${name}`, dmarc);
}

// Marketing (a term of type marketing names the purpose) and transactional purposes.
const marketing = await createPurpose(a.tenant, dbs.pool, { name: 'Newsletter' });
await createTerm(a.tenant, dbs.pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [marketing.id], channels: ['mail'] });
const service = await createPurpose(a.tenant, dbs.pool, { name: 'Account notices' });
await createTerm(a.tenant, dbs.pool, { name: 'Service terms', type: 'service_terms', purposeIds: [service.id], channels: ['mail'] });

/** A send accepted by the API with these purposes, then marked sent as the worker does on a 250. */
async function sendSent(t: Test, domain: string, to: string, purposeIds: number[], receivedAt?: Date): Promise<string> {
  const r = await rawCall(`${https.url}/v1/mails/send`, a.headers, {
    method: 'POST',
    body: { from: `news@${domain}`, to: [{ email: to }], subject: 'News', text: 'Hello', purpose_ids: purposeIds },
  });
  t.equal(r.status, 202, r.text);
  const mailId = r.body.mails[0].mail_id as string;
  await dbs.pool.query(`UPDATE mails SET status = 3, sent_at = now(), received_at = coalesce($2, received_at) WHERE mail_id = $1`, [mailId, receivedAt ?? null]);
  return mailId;
}

t.test('404 domain_not_found for a name the instance does not have, and for another instance’s domain', async (t) => {
  const none = await compliance('nowhere.example');
  t.equal(none.status, 404);
  t.equal(none.body.code, 'domain_not_found');
  const other = await compliance(GOOD, https.url, b.headers);
  t.equal(other.status, 404, "B does not see A's domain");
  t.equal(other.body.code, 'domain_not_found');
  const status = await rawCall(`${https.url}/v1/domains/nowhere.example/status`, a.headers);
  t.same([status.status, status.body.code], [404, 'domain_not_found'], 'as the status read answers');
});

t.test('bad input is a 4xx, never a 500', async (t) => {
  for (const name of ['a\u0000b', 'x'.repeat(300), '..', '%', ' ', 'é.example', "a'; DROP TABLE domains; --"]) {
    const r = await rawCall(`${https.url}/v1/domains/${encodeURIComponent(name)}/compliance`, a.headers);
    t.ok(r.status >= 400 && r.status < 500, `${JSON.stringify(name).slice(0, 40)} -> ${r.status} ${r.body?.code}`);
  }
  const noScope = await makeTenant(dbs.pool, { scopes: ['mail:send'] });
  t.equal((await compliance(GOOD, https.url, noScope.headers)).status, 403, 'scope domains:read');
});

t.test('every check names its providers and the provider page it comes from', async (t) => {
  const checks = await checksOf(t, GOOD);
  t.same(Object.keys(checks), ['spf_aligned', 'dkim_aligned', 'dmarc_policy', 'dmarc_reports_received', 'one_click_unsubscribe', 'unsubscribe_within_2_days', 'complaint_rate']);
  t.equal(checks.complaint_rate!.status, 'unknown', 'no mail in the figures (test/domain-compliance-complaints.test.ts has them)');
  for (const [rule, c] of Object.entries(checks)) {
    t.ok(c.applies_to.length > 0, `${rule} applies to someone`);
    t.match(c.source, /^https:\/\/(support\.google\.com\/a\/answer\/81126|senders\.yahooinc\.com\/best-practices\/|techcommunity\.microsoft\.com\/)/, rule);
  }
});

t.test('spf_aligned: the return-path host authorizes Cartero -> pass; nothing published -> fail; strict alignment -> warn; a second record -> fail', async (t) => {
  t.equal((await checksOf(t, GOOD)).spf_aligned!.status, 'pass');
  const bad = (await checksOf(t, BAD)).spf_aligned!;
  t.equal(bad.status, 'fail');
  t.match(bad.detail, `bounces.${BAD}`);
  t.match(bad.detail, 'v=spf1 mx -all', 'says what to publish');
  t.equal((await checksOf(t, WEAK)).spf_aligned!.status, 'warn', 'aspf=s: a subdomain envelope is not aligned');
  dns.txt(`bounces.${GOOD}`, 'v=spf1 include:_spf.other.example -all');
  t.equal((await checksOf(t, GOOD)).spf_aligned!.status, 'fail', 'two SPF records: permanent error');
  dns.remove(`bounces.${GOOD}`, 'TXT');
  dns.txt(`bounces.${GOOD}`, 'v=spf1 include:_spf.other.example -all');
  await checkSays(t, GOOD, 'spf_aligned', 'fail', 'does not authorize', 'a record without Cartero’s mechanism');
  dns.remove(`bounces.${GOOD}`, 'TXT');
  dns.txt(`bounces.${GOOD}`, 'v=spf1 mx -all');
  t.equal((await checksOf(t, GOOD)).spf_aligned!.status, 'pass');
});

t.test('dkim_aligned: 2048 bits published -> pass; 1024 -> warn; 512 -> fail; record missing -> fail; no key -> fail', async (t) => {
  const good = (await checksOf(t, GOOD)).dkim_aligned!;
  t.equal(good.status, 'pass');
  t.match(good.detail, `d=${GOOD}`);
  t.match(good.detail, '2048 bits');
  await checkSays(t, WEAK, 'dkim_aligned', 'warn', '1024 bits');
  await checkSays(t, BAD, 'dkim_aligned', 'fail', '512 bits');
  const key = await keyOf(GOOD);
  dns.remove(`${key.selector}._domainkey.${GOOD}`);
  await checkSays(t, GOOD, 'dkim_aligned', 'fail', 'has no record', 'the record is gone');
  dns.txt(`${key.selector}._domainkey.${GOOD}`, `v=DKIM1; k=rsa; p=${key.public_key}`);
  await addDomain(a.tenant, dbs.pool, 'unsigned.example');
  t.equal((await checksOf(t, 'unsigned.example')).dkim_aligned!.status, 'fail', 'no key: unsigned');
});

t.test('dmarc_policy: p=none -> pass; missing -> fail; no valid p= -> fail', async (t) => {
  t.equal((await checksOf(t, GOOD)).dmarc_policy!.status, 'pass');
  t.equal((await checksOf(t, WEAK)).dmarc_policy!.status, 'pass', 'p=reject is at least none');
  await checkSays(t, BAD, 'dmarc_policy', 'fail', `v=DMARC1; p=none; adkim=r; aspf=r; rua=mailto:dmarc@bounces.${BAD}`, undefined, 'suggests the record');
  dns.txt(`_dmarc.${BAD}`, 'v=DMARC1; p=monitor');
  await checkSays(t, BAD, 'dmarc_policy', 'fail', 'p=monitor');
  dns.remove(`_dmarc.${BAD}`);
});

t.test('dmarc_reports_received: rua names Cartero and a report arrived -> pass; none yet -> unknown; stopped -> warn; elsewhere -> warn; no rua / no record -> fail', async (t) => {
  t.equal((await checksOf(t, GOOD)).dmarc_reports_received!.status, 'unknown', 'rua names Cartero, nothing arrived yet');
  const report = (id: string, receivedAt: Date) =>
    dbs.pool.query(
      `INSERT INTO dmarc_reports (instance_id, domain_id, org_name, report_id, begin_at, end_at, schema, policy, message_count, dmarc_pass_count,
                                  record_count, reporter_authenticated, received_at, records)
       VALUES ($1, $2, 'google.com', $3, $4, $4, 'rfc7489', '{}', 10, 10, 1, true, $4, '[]')`,
      [a.tenant.instanceId, goodId, id, receivedAt],
    );
  await report('old', new Date(Date.now() - 20 * DAY));
  await checkSays(t, GOOD, 'dmarc_reports_received', 'warn', 'no report arrived in the last 7 days', 'reports came, none in the last 7 days');
  await report('new', new Date(Date.now() - DAY));
  await checkSays(t, GOOD, 'dmarc_reports_received', 'pass', '1 report arrived in the last 7 days');
  // Another instance's report for a domain of the same name is not A's.
  await addDomain(b.tenant, dbs.pool, GOOD);
  await checkSays(t, WEAK, 'dmarc_reports_received', 'warn', `mailto:dmarc@bounces.${WEAK}`, undefined, 'says what to add');
  t.equal((await checksOf(t, BAD)).dmarc_reports_received!.status, 'fail', 'no DMARC record: no reports');
  dns.txt(`_dmarc.${BAD}`, 'v=DMARC1; p=none');
  await checkSays(t, BAD, 'dmarc_reports_received', 'fail', 'no rua=');
  dns.remove(`_dmarc.${BAD}`);
});

t.test('one_click_unsubscribe: marketing mail of the last 30 days over https, signed -> pass; over http -> fail; unsigned -> fail; none -> unknown', async (t) => {
  t.equal((await checksOf(t, GOOD)).one_click_unsubscribe!.status, 'unknown', 'no mail yet');
  await sendSent(t, GOOD, 'ann@example.org', [service.id]);
  t.equal((await checksOf(t, GOOD)).one_click_unsubscribe!.status, 'unknown', 'transactional purposes only');
  await sendSent(t, GOOD, 'old@example.org', [marketing.id], new Date(Date.now() - 40 * DAY));
  t.equal((await checksOf(t, GOOD)).one_click_unsubscribe!.status, 'unknown', 'a marketing mail of 40 days ago is out of the window');
  await sendSent(t, GOOD, 'bob@example.org', [marketing.id, service.id]);
  await checkSays(t, GOOD, 'one_click_unsubscribe', 'pass', '1 marketing mail');
  const http = (await checksOf(t, GOOD, plain.url)).one_click_unsubscribe!;
  t.equal(http.status, 'fail', 'http List-Unsubscribe');
  t.match(http.detail, 'https');
});

t.test('one_click_unsubscribe: unsigned marketing mail -> fail', async (t) => {
  await setDomainChecks(a.tenant, dbs.pool, 'unsigned.example', { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
  await createSender(a.tenant, dbs.pool, { email: 'news@unsigned.example', name: 'News' });
  await sendSent(t, 'unsigned.example', 'cy@example.org', [marketing.id]);
  const c = (await checksOf(t, 'unsigned.example')).one_click_unsubscribe!;
  t.equal(c.status, 'fail');
  t.match(c.detail, 'unsigned');
});

t.test('unsubscribe_within_2_days: in force at once -> pass; not in force after 2 days -> fail; not yet -> warn; none -> unknown', async (t) => {
  t.equal((await checksOf(t, GOOD)).unsubscribe_within_2_days!.status, 'unknown', 'nothing to measure');
  const mailId = await sendSent(t, GOOD, 'dan@example.org', [marketing.id]);
  const target = await findUnsubscribeTarget(dbs.pool, mailId);
  await unsubscribe(a.tenant, dbs.pool, target!, { method: 'one_click' });
  await checkSays(t, GOOD, 'unsubscribe_within_2_days', 'pass', '1 unsubscribe');
  // An unsubscribe recorded 3 days ago whose restriction was never written.
  const late = await sendSent(t, BAD, 'eve@example.org', [marketing.id]);
  await dbs.pool.query(`INSERT INTO mail_unsubscribes (instance_id, mail_id, method, unsubscribed_at) VALUES ($1, $2, 'page', $3)`, [
    a.tenant.instanceId,
    late,
    new Date(Date.now() - 3 * DAY),
  ]);
  const fail = (await checksOf(t, BAD)).unsubscribe_within_2_days!;
  t.equal(fail.status, 'fail');
  t.match(fail.detail, 'still not in force after 2 days');
  // Put in force 3 days late: measured, still a fail.
  await dbs.pool.query(`INSERT INTO mail_restrictions (instance_id, recipient, reason) VALUES ($1, 'eve@example.org', 'unsubscribe')`, [a.tenant.instanceId]);
  const slow = (await checksOf(t, BAD)).unsubscribe_within_2_days!;
  t.equal(slow.status, 'fail');
  t.match(slow.detail, 'took over 2 days');
  t.match(slow.detail, '3.0 days');
  // One of an hour ago not in force yet: still within the 2 days.
  const recent = await sendSent(t, WEAK, 'fay@example.org', [marketing.id]);
  await dbs.pool.query(`INSERT INTO mail_unsubscribes (instance_id, mail_id, method, unsubscribed_at) VALUES ($1, $2, 'page', now() - interval '1 hour')`, [
    a.tenant.instanceId,
    recent,
  ]);
  t.equal((await checksOf(t, WEAK)).unsubscribe_within_2_days!.status, 'warn');
});

t.test('DNS that does not answer makes the DNS checks unknown, never a 500 or a 503', async (t) => {
  await dns.stop();
  t.teardown(() => dns.start());
  const checks = await checksOf(t, GOOD);
  t.same(
    ['spf_aligned', 'dkim_aligned', 'dmarc_policy'].map((r) => checks[r]!.status),
    ['unknown', 'unknown', 'unknown'],
  );
  t.equal(checks.dmarc_reports_received!.status, 'pass', 'a report arrived: known without DNS');
  t.equal(checks.one_click_unsubscribe!.status, 'pass', 'from stored data');
});
