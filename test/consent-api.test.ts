import { createHash } from 'node:crypto';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { collectionSchema } from '../api/schemas/common.js';
import { eventSchema, proofSchema, purposeSchema, resolveSchema, termSchema } from '../api/schemas/consent.js';
import { compile } from '../domain/validation.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion, setTermActive } from '../domain/consent/terms.js';
import { withTenant } from '../domain/tenancy/context.js';
import { startEventPump } from '../workers/jobs/event-pump.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { waitFor } from './helpers/send-stack.js';
import { startTestWeb } from './helpers/web.js';

/**
 * Consent over HTTP on the real app (issue 14): purposes, terms, registering events with every
 * refusal the issue names, the history listing, the resolver's truth table and the proof export,
 * plus the rules the database enforces by itself. Purposes and terms are panel operations: made
 * here with the domain functions the CLI calls (test/consent-cli.test.ts runs the CLI itself).
 */

const dbs = await testDatabases(t, 'consentapi');
const { url } = await startTestWeb(t, dbs);
const scopes = ['consent:read', 'consent:write'];
const a = await makeTenant(dbs.pool, { scopes });
const b = await makeTenant(dbs.pool, { scopes });
// 401 and 403 (scopes) on every route: test/route-security.test.ts.

const purposePage = compile(collectionSchema(purposeSchema), 'json');
const termPage = compile(collectionSchema(termSchema), 'json');
const eventPage = compile(collectionSchema(eventSchema), 'json');
const event = compile(eventSchema, 'json');
const resolved = compile(resolveSchema, 'json');
const proofDoc = compile(proofSchema, 'json');

interface Reply {
  status: number;
  body: any;
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = a.headers): Promise<Reply> {
  const res = await fetch(url + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
const get = (path: string, headers = a.headers) => call('GET', path, undefined, headers);
const post = (body: unknown, headers = a.headers) => call('POST', '/v1/consent-events', body, headers);

// ---- fixtures (all before the first subtest) -------------------------------------------------
const [newsletter, profiling, partners] = [
  await createPurpose(a.tenant, dbs.pool, { name: 'Newsletter' }),
  await createPurpose(a.tenant, dbs.pool, { name: 'Profiling' }),
  await createPurpose(a.tenant, dbs.pool, { name: 'Partners' }),
];
const marketing = await createTerm(a.tenant, dbs.pool, {
  name: 'Marketing', type: 'marketing', purposeIds: [newsletter.id, profiling.id], channels: ['mail', 'sms', 'push'],
});
await addTermVersion(a.tenant, dbs.pool, marketing.id, { version: 'v1', body: 'Version one: we may write to you.', documentUrl: 'https://shop.example/legal/v1' });
await addTermVersion(a.tenant, dbs.pool, marketing.id, { version: 'v2', body: 'Versión dos: podemos escribirle. ✉️' });
await setCurrentVersion(a.tenant, dbs.pool, marketing.id, 'v1');
const noVersion = await createTerm(a.tenant, dbs.pool, { name: 'Draft terms', type: 'other', purposeIds: [partners.id], channels: ['mail'] });
const inactive = await createTerm(a.tenant, dbs.pool, { name: 'Old terms', type: 'service_terms', purposeIds: [partners.id], channels: ['mail'] });
await addTermVersion(a.tenant, dbs.pool, inactive.id, { version: '1', body: 'Old.' });
await setCurrentVersion(a.tenant, dbs.pool, inactive.id, '1');
await setTermActive(a.tenant, dbs.pool, inactive.id, false);
const bPurpose = await createPurpose(b.tenant, dbs.pool, { name: 'Newsletter' });
const bTerm = await createTerm(b.tenant, dbs.pool, { name: 'B terms', type: 'marketing', purposeIds: [bPurpose.id], channels: ['mail'] });
await addTermVersion(b.tenant, dbs.pool, bTerm.id, { version: 'b1', body: 'B text.' });
await setCurrentVersion(b.tenant, dbs.pool, bTerm.id, 'b1');

const versionIds = async (termId: number) =>
  new Map((await dbs.pool.query('SELECT version, id FROM consent_term_versions WHERE term_id = $1', [termId])).rows.map((r) => [r.version, Number(r.id)]));

/** A valid single opt-in body for the marketing term. */
const grant = (contact: string, extra: Record<string, unknown> = {}, action = 'allow', purpose = newsletter.id) => ({
  term_id: marketing.id,
  method: 'single_opt_in',
  rules: [{ channel: 'mail', contact_type: 'email_address', contact, purpose_id: purpose, action }],
  ...extra,
});

async function created(t: Test, body: unknown, headers = a.headers): Promise<any> {
  const r = await post(body, headers);
  if (!t.equal(r.status, 201, `201 (${JSON.stringify(r.body).slice(0, 300)})`)) return undefined;
  event(r.body);
  return r.body;
}

const eventCount = async () => Number((await dbs.pool.query('SELECT count(*) AS n FROM consent_events')).rows[0].n);

async function refused(t: Test, body: unknown, status: number, code: string, what: string): Promise<any> {
  const before = await eventCount();
  const r = await post(body);
  t.equal(r.status, status, `${what}: ${status}`);
  t.equal(r.body.code, code, `${what}: ${code}`);
  t.equal(await eventCount(), before, `${what}: nothing stored`);
  return r.body;
}

// ---------------------------------------------------------------------------------------------

t.test('purposes and terms: the spec fields, paginated, per instance', async (t) => {
  const purposes = await get('/v1/consent-purposes?page_size=2');
  t.equal(purposes.status, 200);
  purposePage(purposes.body);
  t.same(purposes.body.data.map((p: any) => p.name), ['Newsletter', 'Profiling']);
  t.match(purposes.body.pagination, { page: 1, page_size: 2, has_more: true, total_items: 3, total_pages: 2 });
  t.same((await get('/v1/consent-purposes?page=2&page_size=2')).body.data.map((p: any) => p.id), [partners.id]);
  t.same((await get('/v1/consent-purposes', b.headers)).body.data.map((p: any) => p.id), [bPurpose.id], "b sees only its own");

  const terms = await get('/v1/consent-terms');
  t.equal(terms.status, 200);
  termPage(terms.body);
  const m = terms.body.data.find((x: any) => x.id === marketing.id);
  t.same(Object.keys(m).sort(), ['channels', 'created_at', 'id', 'is_active', 'name', 'purpose_ids', 'type', 'updated_at', 'versions']);
  t.match(m, { name: 'Marketing', type: 'marketing', purpose_ids: [newsletter.id, profiling.id], channels: ['mail', 'sms', 'push'], is_active: true });
  t.same(Object.keys(m.versions[0]).sort(), ['body', 'document_url', 'is_current', 'published_at', 'version']);
  t.match(m.versions, [
    { version: 'v1', body: 'Version one: we may write to you.', document_url: 'https://shop.example/legal/v1', is_current: true },
    { version: 'v2', body: 'Versión dos: podemos escribirle. ✉️', document_url: null, is_current: false },
  ]);
  t.same(terms.body.data.find((x: any) => x.id === noVersion.id).versions, [], 'a term with no version yet');
  t.equal(terms.body.data.find((x: any) => x.id === inactive.id).is_active, false);
  t.same((await get('/v1/consent-terms', b.headers)).body.data.map((x: any) => x.id), [bTerm.id]);
});

t.test('POST /v1/consent-events: 201 with the event as GET shows it', async (t) => {
  const body = {
    term_id: marketing.id,
    method: 'single_opt_in',
    rules: [
      { channel: 'mail', contact_type: 'email_address', contact: 'Ann.Mixed@Example.COM', purpose_id: newsletter.id, action: 'allow' },
      { channel: 'sms', contact_type: 'phone_number', contact: '+34600111222', purpose_id: newsletter.id, action: 'allow' },
      { channel: 'push', contact_type: 'uniquecode', contact: 'Cust-ABC', purpose_id: profiling.id, action: 'deny' },
    ],
    ip_address: '2001:db8::7',
    user_agent: 'Mozilla/5.0 (Test)',
    evidence: { form: 'signup', checkbox: 'I want the newsletter', zeta: 1, alpha: [true, null] },
  };
  const e = await created(t, body);
  const v = await versionIds(marketing.id);
  t.match(e, {
    term_id: marketing.id, term_version_id: v.get('v1'), status: 'confirmed', method: 'single_opt_in', source: 'api',
    submission_id: null, form_id: null, form_name: null, confirmed_at: null, expired_at: null,
  });
  t.same(e.rules.map((r: any) => [r.channel, r.contact_type, r.contact, r.purpose_id, r.action]), [
    ['mail', 'email_address', 'ann.mixed@example.com', newsletter.id, 'allow'],
    ['sms', 'phone_number', '+34600111222', newsletter.id, 'allow'],
    ['push', 'uniquecode', 'Cust-ABC', profiling.id, 'deny'],
  ], 'email lowercased, the others as sent, in the order given');
  const listed = await get(`/v1/consent-events?contact=ann.mixed%40example.com`);
  t.same(listed.body.data, [e], 'the listing shows the same event');

  const stored = (await dbs.pool.query('SELECT host(ip_address) AS ip, user_agent, evidence::text AS evidence FROM consent_events WHERE id = $1', [e.id])).rows[0];
  t.same(stored, { ip: '2001:db8::7', user_agent: 'Mozilla/5.0 (Test)', evidence: JSON.stringify(body.evidence) }, 'declared proof kept as sent (member order too)');

  const outbox = await dbs.pool.query('SELECT kind, mail_id, entity_id, instance_id FROM event_outbox WHERE entity_id = $1', [e.id]);
  t.same(outbox.rows, [{ kind: 'consent.event.created', mail_id: null, entity_id: e.id, instance_id: a.tenant.instanceId }], 'its outbox row');

  await t.test('the event freezes the version current when it was registered', async (t) => {
    await setCurrentVersion(a.tenant, dbs.pool, marketing.id, 'v2');
    t.teardown(() => setCurrentVersion(a.tenant, dbs.pool, marketing.id, 'v1'));
    const later = await created(t, grant('later@example.com'));
    t.equal(later.term_version_id, v.get('v2'), 'a new event takes v2');
    t.equal((await get(`/v1/consent-events?contact=ann.mixed%40example.com`)).body.data[0].term_version_id, v.get('v1'), 'the earlier one keeps v1');
  });

  await t.test('double opt-in is pending', async (t) => {
    const e = await created(t, { ...grant('pending@example.com'), method: 'double_opt_in' });
    t.match(e, { status: 'pending', method: 'double_opt_in', confirmed_at: null, expired_at: null });
  });
});

t.test('every refusal of POST /v1/consent-events', async (t) => {
  await t.test('404: unknown term, or another instance’s', async (t) => {
    await refused(t, { ...grant('x@example.com'), term_id: 999999 }, 404, 'consent_term_not_found', 'unknown term');
    await refused(t, { ...grant('x@example.com'), term_id: bTerm.id, rules: [{ ...grant('x@example.com').rules[0], purpose_id: bPurpose.id }] }, 404, 'consent_term_not_found', "b's term");
  });
  await t.test('409s', async (t) => {
    await refused(t, { ...grant('x@example.com'), term_id: inactive.id, rules: [{ ...grant('x@example.com').rules[0], purpose_id: partners.id }] }, 409, 'consent_term_inactive', 'inactive term');
    await refused(t, { ...grant('x@example.com'), term_id: noVersion.id, rules: [{ ...grant('x@example.com').rules[0], purpose_id: partners.id }] }, 409, 'consent_term_no_current_version', 'no current version');
    const mismatch = (channel: string, contact_type: string, contact: string) => ({
      ...grant('x@example.com'),
      rules: [{ channel, contact_type, contact, purpose_id: newsletter.id, action: 'allow' }],
    });
    const m = await refused(t, mismatch('sms', 'email_address', 'x@example.com'), 409, 'consent_contact_type_channel_mismatch', 'an email on sms');
    t.equal(m.pointer, '/rules/0');
    await refused(t, mismatch('push', 'email_address', 'x@example.com'), 409, 'consent_contact_type_channel_mismatch', 'an email on push');
    await refused(t, mismatch('mail', 'phone_number', '+34600111222'), 409, 'consent_contact_type_channel_mismatch', 'a phone on mail');
    await refused(t, mismatch('push', 'phone_number', '+34600111222'), 409, 'consent_contact_type_channel_mismatch', 'a phone on push');
    const dup = {
      ...grant('x@example.com'),
      rules: [
        { channel: 'mail', contact_type: 'email_address', contact: 'x@example.com', purpose_id: newsletter.id, action: 'allow' },
        { channel: 'mail', contact_type: 'uniquecode', contact: 'C-1', purpose_id: profiling.id, action: 'allow' },
        { channel: 'mail', contact_type: 'uniquecode', contact: 'C-2', purpose_id: newsletter.id, action: 'deny' },
      ],
    };
    const d = await refused(t, dup, 409, 'consent_duplicate_rule', 'two rules for mail + newsletter');
    t.equal(d.pointer, '/rules/2');
  });
  await t.test('422s, all field errors together', async (t) => {
    const body = {
      ...grant('x@example.com'),
      rules: [
        { channel: 'wsp', contact_type: 'phone_number', contact: '+34600111222', purpose_id: newsletter.id, action: 'allow' },
        { channel: 'mail', contact_type: 'email_address', contact: 'y@example.com', purpose_id: partners.id, action: 'allow' },
        { channel: 'mail', contact_type: 'email_address', contact: 'not an email', purpose_id: profiling.id, action: 'allow' },
        { channel: 'sms', contact_type: 'phone_number', contact: '600 111 222', purpose_id: profiling.id, action: 'allow' },
      ],
      ip_address: 'fe80::1%eth0',
      evidence: { blob: 'x'.repeat(16 * 1024) },
    };
    const r = await refused(t, body, 422, 'validation_error', 'field errors');
    t.same(
      r.errors.map((e: any) => [e.pointer, e.code]),
      [
        ['/rules/0/channel', 'value_error.channel_not_in_term'],
        ['/rules/1/purpose_id', 'value_error.purpose_not_in_term'],
        ['/rules/2/contact', 'value_error.email'],
        ['/rules/3/contact', 'value_error.phone_number'],
        ['/ip_address', 'value_error.ip_address'],
        ['/evidence', 'value_error.too_large'],
      ],
    );
    t.match(r.errors[5].params, { max_bytes: 16384 });
    for (const ip of ['999.1.1.1', '1.2.3.4/8', '1::2:3:4:5:6:7:8']) {
      const bad = await refused(t, grant('x@example.com', { ip_address: ip }), 422, 'validation_error', `ip_address ${ip}`);
      t.same(bad.errors, [{ pointer: '/ip_address', code: 'value_error.ip_address', message: 'Input should be an IPv4 or IPv6 address' }]);
    }
    const schema = await refused(
      t,
      { term_id: marketing.id, method: 'triple_opt_in', rules: [{ channel: 'fax', contact_type: 'email_address', contact: '', purpose_id: 0, action: 'maybe' }], extra: 1 },
      422, 'validation_error', 'schema errors',
    );
    t.same(
      schema.errors.map((e: any) => [e.pointer, e.code]).sort(),
      [
        ['/extra', 'extra_forbidden'],
        ['/method', 'enum'],
        ['/rules/0/action', 'enum'],
        ['/rules/0/channel', 'enum'],
        ['/rules/0/contact', 'string_too_short'],
        ['/rules/0/purpose_id', 'greater_than_equal'],
      ],
    );
    const missing = await refused(t, { method: 'single_opt_in', rules: [] }, 422, 'validation_error', 'missing term, empty rules');
    t.same(missing.errors.map((e: any) => [e.pointer, e.code]).sort(), [['/rules', 'too_short'], ['/term_id', 'missing']]);
    await refused(t, { ...grant('x@example.com'), evidence: ['not', 'an', 'object'] }, 422, 'validation_error', 'evidence must be an object');
  });
});

t.test('GET /v1/consent-events: newest first, not collapsed, filters', async (t) => {
  const first = await created(t, grant('history@example.com'));
  const revoked = await created(t, grant('history@example.com', {}, 'deny'));
  const pending = await created(t, { ...grant('history@example.com', {}, 'allow', profiling.id), method: 'double_opt_in' });
  const other = await created(t, grant('someone-else@example.com'));
  const page = await get('/v1/consent-events?contact=history%40example.com');
  t.equal(page.status, 200);
  eventPage(page.body);
  t.same(page.body.data.map((e: any) => e.id), [pending.id, revoked.id, first.id], 'grant and revocation both listed, newest first');
  t.same(page.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: null, total_pages: null });
  t.same((await get('/v1/consent-events?contact=History%40Example.com')).body.data, [], 'a mixed-case email matches nothing');
  t.same((await get('/v1/consent-events?contact=history%40example.com&status=pending')).body.data.map((e: any) => e.id), [pending.id]);
  t.same((await get('/v1/consent-events?contact=history%40example.com&status=confirmed&page_size=1')).body, {
    data: [revoked],
    pagination: { page: 1, page_size: 1, has_more: true, total_items: null, total_pages: null },
  });
  t.same((await get('/v1/consent-events?contact=history%40example.com&status=confirmed&page_size=1&page=2')).body.data.map((e: any) => e.id), [first.id]);
  t.same((await get('/v1/consent-events?contact=history%40example.com&status=expired')).body.data, []);
  t.same((await get(`/v1/consent-events?term_id=${noVersion.id}`)).body.data, []);
  const all = (await get('/v1/consent-events?page_size=100')).body.data.map((e: any) => e.id);
  t.same(all.slice(0, 4), [other.id, pending.id, revoked.id, first.id]);
  t.same([...all].sort((x: number, y: number) => y - x), all, 'newest first');
  t.same((await get(`/v1/consent-events?term_id=${marketing.id}&page_size=100`)).body.data.map((e: any) => e.id), all);
  t.same((await get('/v1/consent-events', b.headers)).body.data, [], "b sees none of a's");
  t.equal((await get('/v1/consent-events?status=done')).status, 422);
});

t.test('the resolver: truth table', async (t) => {
  const resolve = async (qs: string, headers = a.headers) => {
    const r = await get(`/v1/consent-rules/resolve?${qs}`, headers);
    if (r.status === 200) resolved(r.body);
    return r;
  };
  const verdicts = async (contacts: string, types: string, purposes: number[], channel = 'mail') => {
    const r = await resolve(`contacts=${encodeURIComponent(contacts)}&contact_types=${types}&channel=${channel}&purpose_ids=${purposes.join(',')}`);
    t.equal(r.status, 200, JSON.stringify(r.body).slice(0, 200));
    return r.body.data as any[];
  };
  const N = newsletter.id;
  const P = profiling.id;

  const allowThenDeny = [await created(t, grant('atd@example.com')), await created(t, grant('atd@example.com', {}, 'deny'))];
  const denyThenAllow = [await created(t, grant('dta@example.com', {}, 'deny')), await created(t, grant('dta@example.com'))];
  await created(t, { ...grant('pending@example.org'), method: 'double_opt_in' });
  const expired = await created(t, { ...grant('expired@example.org'), method: 'double_opt_in' });
  await dbs.pool.query(`UPDATE consent_events SET status = 'expired', expired_at = now() WHERE id = $1`, [expired.id]);
  const confirmed = await created(t, { ...grant('confirmed@example.org'), method: 'double_opt_in' });
  await dbs.pool.query(`UPDATE consent_events SET status = 'confirmed', confirmed_at = now() WHERE id = $1`, [confirmed.id]);
  const twice = [await created(t, grant('twice@example.com')), await created(t, grant('twice@example.com'))];
  const both = await created(t, {
    term_id: marketing.id,
    method: 'single_opt_in',
    rules: [
      { channel: 'mail', contact_type: 'email_address', contact: 'two@example.com', purpose_id: N, action: 'allow' },
      { channel: 'mail', contact_type: 'email_address', contact: 'two@example.com', purpose_id: P, action: 'deny' },
      { channel: 'push', contact_type: 'uniquecode', contact: 'two@example.com', purpose_id: N, action: 'allow' },
    ],
  });

  t.match(await verdicts('atd@example.com', 'email_address', [N]), [{ verdict: 'denied', event_ids: [allowThenDeny[1].id] }], 'allow then deny: denied');
  t.match(await verdicts('dta@example.com', 'email_address', [N]), [{ verdict: 'denied', event_ids: [denyThenAllow[0].id] }], 'deny then allow: denied');
  t.match(await verdicts('pending@example.org', 'email_address', [N]), [{ verdict: 'no_consent', event_ids: [] }], 'pending authorizes nothing');
  t.match(await verdicts('expired@example.org', 'email_address', [N]), [{ verdict: 'no_consent', event_ids: [] }], 'expired authorizes nothing');
  t.match(await verdicts('confirmed@example.org', 'email_address', [N]), [{ verdict: 'allowed', event_ids: [confirmed.id] }], 'the same once confirmed: allowed');
  t.match(await verdicts('twice@example.com', 'email_address', [N]), [{ verdict: 'allowed', event_ids: [twice[1].id, twice[0].id] }], 'every allowing event, newest first');
  t.same(await verdicts('nobody@example.com', 'email_address', [N]), [
    { contact: 'nobody@example.com', contact_type: 'email_address', channel: 'mail', purpose_id: N, verdict: 'no_consent', event_ids: [] },
  ], 'unknown contact');
  t.same(await verdicts('TWO@Example.com', 'email_address', [N, P]), [
    { contact: 'two@example.com', contact_type: 'email_address', channel: 'mail', purpose_id: N, verdict: 'allowed', event_ids: [both.id] },
    { contact: 'two@example.com', contact_type: 'email_address', channel: 'mail', purpose_id: P, verdict: 'denied', event_ids: [both.id] },
  ], 'two purposes; a mixed-case email is compared lowercased');
  t.match(await verdicts('two@example.com', 'uniquecode', [N]), [{ verdict: 'no_consent' }], 'the same text as a uniquecode is another identifier');
  t.match(await verdicts('two@example.com', 'uniquecode', [N], 'push'), [{ verdict: 'allowed', event_ids: [both.id] }], 'which has consent on push');
  t.match(await verdicts('atd@example.com', 'email_address', [N], 'sms'), [{ verdict: 'no_consent' }], 'another channel');
  t.match(await verdicts('Cust-ABC', 'uniquecode', [P], 'push'), [{ verdict: 'denied' }], 'a uniquecode as sent');
  t.match(await verdicts('cust-abc', 'uniquecode', [P], 'push'), [{ verdict: 'no_consent' }], 'uniquecode is case-sensitive');
  const pairs = await verdicts('atd@example.com,C-404,dta@example.com', 'email_address,uniquecode,email_address', [N, 999999]);
  t.same(pairs.map((i) => [i.contact, i.purpose_id, i.verdict]), [
    ['atd@example.com', N, 'denied'], ['atd@example.com', 999999, 'no_consent'],
    ['C-404', N, 'no_consent'], ['C-404', 999999, 'no_consent'],
    ['dta@example.com', N, 'denied'], ['dta@example.com', 999999, 'no_consent'],
  ], 'one item per identifier and purpose, in the order asked');
  t.match(await verdicts('atd@example.com', 'email_address', [N]), [{ verdict: 'denied' }]);
  const asB = await resolve(`contacts=twice%40example.com&contact_types=email_address&channel=mail&purpose_ids=${N}`, b.headers);
  t.match(asB.body.data, [{ verdict: 'no_consent' }], "another instance's consents are not b's");

  const mismatch = await resolve(`contacts=a%40x.com,C-1&contact_types=email_address&channel=mail&purpose_ids=${N}`);
  t.equal(mismatch.status, 409);
  t.equal(mismatch.body.code, 'consent_contact_pairs_mismatch');
  const missing = await resolve('channel=mail');
  t.equal(missing.status, 422);
  t.same(missing.body.errors.map((e: any) => [e.pointer, e.code]), [['/contacts', 'missing'], ['/contact_types', 'missing'], ['/purpose_ids', 'missing']]);
  const bad = await resolve(`contacts=a%40x.com,&contact_types=email_address,phone&channel=fax&purpose_ids=1,x`);
  t.equal(bad.status, 422);
  t.same(bad.body.errors.map((e: any) => [e.pointer, e.code]).sort(), [['/channel', 'enum'], ['/purpose_ids', 'string_pattern_mismatch']]);
  const items = await resolve(`contacts=a%40x.com,&contact_types=email_address,phone&channel=mail&purpose_ids=1`);
  t.same(items.body.errors.map((e: any) => [e.pointer, e.code]), [['/contacts', 'value_error.empty_item'], ['/contact_types', 'enum']]);
  const many = await resolve(`contacts=${Array(101).fill('c').join(',')}&contact_types=${Array(101).fill('uniquecode').join(',')}&channel=mail&purpose_ids=1`);
  t.match(many.body.errors, [{ pointer: '/contacts', code: 'too_long' }]);
});

t.test('the proof export: every event of the contact, the exact texts, the evidence', async (t) => {
  const v = await versionIds(marketing.id);
  const first = await created(t, grant('proof@example.com', { ip_address: '192.0.2.10', user_agent: 'UA one', evidence: { page: '/signup', box: 'Yes please' } }));
  await setCurrentVersion(a.tenant, dbs.pool, marketing.id, 'v2');
  t.teardown(() => setCurrentVersion(a.tenant, dbs.pool, marketing.id, 'v1'));
  const dbl = await created(t, { ...grant('proof@example.com', {}, 'allow', profiling.id), method: 'double_opt_in' });
  await dbs.pool.query(
    `UPDATE consent_events SET status = 'confirmed', confirmed_at = now(), confirmation_ip = '198.51.100.7', confirmation_user_agent = 'Clicker/1.0' WHERE id = $1`,
    [dbl.id],
  );
  const revoke = await created(t, grant('proof@example.com', {}, 'deny'));

  const r = await get('/v1/consent-events/proof?contact=proof%40example.com');
  t.equal(r.status, 200);
  proofDoc(r.body);
  const proof = r.body;
  t.match(proof, { contact: 'proof@example.com', instance: a.slug });
  t.same(proof.events.map((e: any) => e.id), [first.id, dbl.id, revoke.id], 'oldest first');
  t.same(proof.events[0].declared, { ip_address: '192.0.2.10', user_agent: 'UA one', evidence: { page: '/signup', box: 'Yes please' } });
  t.equal(proof.events[0].confirmation, null, 'single opt-in: no confirmation step');
  t.match(proof.events[1], { status: 'confirmed', method: 'double_opt_in', confirmation: { ip_address: '198.51.100.7', user_agent: 'Clicker/1.0' } });
  t.equal(proof.events[1].confirmation.confirmed_at, proof.events[1].confirmed_at);
  t.same(proof.events[2].declared, { ip_address: null, user_agent: null, evidence: null });
  const listed = (await get('/v1/consent-events?contact=proof%40example.com')).body.data;
  t.same(proof.events.map(({ declared: _, confirmation: __, ...e }: any) => e), [...listed].reverse(), 'each event as the listing shows it');

  t.same(proof.term_versions.map((x: any) => x.id), [v.get('v1'), v.get('v2')], 'each frozen version once');
  for (const tv of proof.term_versions) {
    t.equal(tv.body_sha256, createHash('sha256').update(tv.body, 'utf8').digest('hex'), `version ${tv.version}: the SHA-256 of its exact text`);
  }
  t.match(proof.term_versions, [
    { version: 'v1', body: 'Version one: we may write to you.', document_url: 'https://shop.example/legal/v1', term_id: marketing.id },
    { version: 'v2', body: 'Versión dos: podemos escribirle. ✉️', document_url: null },
  ]);
  t.same(proof.terms, [{ id: marketing.id, name: 'Marketing', type: 'marketing', purpose_ids: [newsletter.id, profiling.id], channels: ['mail', 'sms', 'push'] }]);
  t.same(proof.purposes.map((p: any) => p.name), ['Newsletter', 'Profiling']);

  const none = await get('/v1/consent-events/proof?contact=Proof%40Example.com');
  t.same([none.status, none.body.events, none.body.term_versions], [200, [], []], 'exact against the stored form');
  t.same((await get('/v1/consent-events/proof?contact=proof%40example.com', b.headers)).body.events, [], "b gets none of a's");
  const missing = await get('/v1/consent-events/proof');
  t.equal(missing.status, 422);
  t.match(missing.body.errors, [{ pointer: '/contact', code: 'missing' }]);
});

t.test('what the database enforces by itself', async (t) => {
  const v = await versionIds(marketing.id);
  await t.rejects(
    dbs.pool.query('UPDATE consent_term_versions SET is_current = true WHERE id = $1', [v.get('v2')]),
    { code: '23505', constraint: 'consent_term_versions_one_current' },
    'a second current version (update)',
  );
  await t.rejects(
    dbs.pool.query(
      `INSERT INTO consent_term_versions (instance_id, term_id, version, body, body_sha256, is_current) VALUES ($1, $2, 'v3', 'Three', '', true)`,
      [a.tenant.instanceId, marketing.id],
    ),
    { code: '23505', constraint: 'consent_term_versions_one_current' },
    'a second current version (direct insert)',
  );
  t.equal(
    (await dbs.pool.query('SELECT count(*)::int AS n FROM consent_term_versions WHERE term_id = $1 AND is_current', [marketing.id])).rows[0].n,
    1,
  );
  await t.rejects(
    dbs.pool.query('UPDATE consent_terms SET purpose_ids = $2 WHERE id = $1', [marketing.id, [newsletter.id]]),
    { code: '23514', constraint: 'consent_terms_purposes_frozen' },
    'purposes are frozen, even for the service role',
  );
  await t.rejects(
    withTenant(dbs.pool, a.tenant, (c) => c.query('UPDATE consent_terms SET purpose_ids = $2 WHERE id = $1', [marketing.id, [newsletter.id]])),
    { code: '42501' },
    'the tenant role has no update path for purposes at all',
  );
  await t.rejects(
    dbs.pool.query(`UPDATE consent_term_versions SET body = 'Changed' WHERE id = $1`, [v.get('v1')]),
    { code: '23514', constraint: 'consent_term_versions_published_frozen' },
    'a published text never changes',
  );
  await t.resolves(dbs.pool.query('UPDATE consent_term_versions SET is_current = is_current WHERE id = $1', [v.get('v1')]), 'is_current may change');
  const refusedEvents = [
    { termId: noVersion.id, status: 'confirmed', code: '23503', why: "an event's version belongs to its term" },
    { termId: marketing.id, status: 'pending', code: '23514', why: 'a single opt-in is never pending' },
  ];
  for (const { termId, status, code, why } of refusedEvents) {
    await t.rejects(
      dbs.pool.query(
        `INSERT INTO consent_events (instance_id, term_id, term_version_id, status, method, source) VALUES ($1, $2, $3, $4, 'single_opt_in', 'api')`,
        [a.tenant.instanceId, termId, v.get('v1'), status],
      ),
      { code },
      why,
    );
  }
  const digest = (await dbs.pool.query('SELECT body, body_sha256 FROM consent_term_versions WHERE id = $1', [v.get('v2')])).rows[0];
  t.equal(digest.body_sha256, createHash('sha256').update(digest.body, 'utf8').digest('hex'), 'the database computes the SHA-256 of the UTF-8 text');
});

t.test('a consent outbox row is done for the event pump without reaching ClickHouse', async (t) => {
  const e = await created(t, grant('pump@example.com'));
  const ch = createClickHouseClient(dbs.clickhouseUrl);
  t.teardown(() => ch.close());
  const pump = startEventPump({ pool: dbs.pool, clickhouse: ch, logger: pino({ level: 'silent' }), intervalMs: 20 });
  t.teardown(() => pump.stop());
  const stage = await waitFor('the consent row handled', async () => {
    const r = await dbs.pool.query('SELECT stage FROM event_outbox WHERE entity_id = $1', [e.id]);
    return r.rows[0]?.stage === 2 ? 2 : undefined;
  });
  t.equal(stage, 2);
  const shipped = await ch.query({ query: `SELECT count() AS n FROM mail_events WHERE event_type LIKE 'consent%'`, format: 'JSONEachRow' });
  t.same(await shipped.json(), [{ n: '0' }]);
});
