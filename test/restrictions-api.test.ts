import t, { type Test } from 'tap';
import { collectionSchema } from '../api/schemas/common.js';
import { complaintSchema } from '../api/schemas/complaints.js';
import { restrictionSchema } from '../api/schemas/restrictions.js';
import { unsubscribeSchema } from '../api/schemas/unsubscribes.js';
import { compile } from '../domain/validation.js';
import { restrict, lift, type RestrictionReason } from '../domain/restrictions/restrictions.js';
import { withTenant, type Tenant } from '../domain/tenancy/context.js';
import { setInstanceAllowList } from '../domain/tenancy/instances.js';
import { rawCall } from './helpers/auth-matrix.js';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { startApiBench } from './helpers/web.js';

/**
 * GET /v1/mail-restrictions, /v1/mail-unsubscribes and /v1/mail-complaints over HTTP on the real
 * app. Restrictions are made with the domain functions the workers and the CLI use; unsubscribe
 * and complaint rows are inserted with SQL against mails accepted by POST /v1/mails/send, as the
 * tracking endpoints and the inbound listener would write them.
 */

const { dbs, url, a, b } = await startApiBench(t, 'restrictions', ['mail:read', 'mail:send']);
await makeSenders(dbs.pool, a.tenant, { domain: 'shop.example', senders: [{ email: 'news', name: 'News' }] });
await makeSenders(dbs.pool, b.tenant, { domain: 'b.example', senders: [{ email: 'news', name: 'B' }] });

// Response shapes are checked against the very schemas the OpenAPI document publishes.
const restrictionPage = compile(collectionSchema(restrictionSchema), 'json');
const unsubscribePage = compile(collectionSchema(unsubscribeSchema), 'json');
const complaintPage = compile(collectionSchema(complaintSchema), 'json');

const ROUTES = ['/v1/mail-restrictions', '/v1/mail-unsubscribes', '/v1/mail-complaints'];

async function get(path: string, headers = a.headers) {
  const res = await fetch(url + path, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const ids = async (path: string, headers = a.headers): Promise<number[]> => {
  const r = await get(path, headers);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.map((x: any) => x.id);
};

const DAY = 86_400_000;
const daysAgo = (n: number, hoursUtc = 12) => {
  const d = new Date(Date.now() - n * DAY);
  d.setUTCHours(hoursUtc, 0, 0, 0);
  return d;
};
const isoDate = (d: Date) => d.toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------
// Fixtures, all made before the first subtest: tap may end the root test once its subtests are
// done and a teardown is registered, so a fixture still loading after a subtest could meet a
// stopped web server or database (test/exports.test.ts had exactly that failure).

// Restrictions.
/** A restriction made the way Cartero makes them, then dated (and lifted) as the test needs. */
async function restriction(tn: Tenant, recipient: string, reason: RestrictionReason, at: Date, lifted?: Date): Promise<number> {
  return withTenant(dbs.pool, tn, async (c) => {
    const { restriction: r } = await restrict(tn, c, recipient, reason);
    if (lifted) await lift(tn, c, recipient);
    await c.query('UPDATE mail_restrictions SET restricted_at = $2, deleted_at = $3 WHERE id = $1', [r.id, at, lifted ?? null]);
    return r.id;
  });
}

const tie = daysAgo(3);
const hardAnn = await restriction(a.tenant, 'ann@example.com', 'hard_bounce', tie);
const bobFirst = await restriction(a.tenant, 'Bob.Smith@Example.com', 'unsubscribe', daysAgo(2), daysAgo(2, 18));
const bobAgain = await restriction(a.tenant, 'bob.smith@example.com', 'unsubscribe', daysAgo(1));
const softCarol = await restriction(a.tenant, 'carol@other.test', 'soft_bounce', daysAgo(4), daysAgo(3, 6));
const panelDave = await restriction(a.tenant, 'dave@example.com', 'unspecified', daysAgo(5));
const sameTime = await restriction(a.tenant, 'erin@example.com', 'hard_bounce', tie);
// Two years old: a restriction is state, not an event, and has no retention cut.
const ancient = await restriction(a.tenant, 'old@ancient.example', 'hard_bounce', daysAgo(730));
const otherAnn = await restriction(b.tenant, 'ann@example.com', 'hard_bounce', daysAgo(1));
const otherOnly = await restriction(b.tenant, 'zed@b.example', 'unsubscribe', daysAgo(1));

const ALL = [bobAgain, bobFirst, sameTime, hardAnn, softCarol, panelDave, ancient];

// Mails, and unsubscribe and complaint rows of them.
async function send(tn: TestTenant, from: string, to: string[], extra: Record<string, unknown> = {}) {
  const res = await fetch(url + '/v1/mails/send', {
    method: 'POST',
    headers: { ...tn.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ from, to: to.map((email) => ({ email })), subject: 'Weekly news', text: 'hello', ...extra }),
  });
  const body = (await res.json()) as any;
  if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(body)}`);
  // Received well before the events, inside the online window.
  await dbs.pool.query("UPDATE mails SET received_at = now() - interval '10 days' WHERE msg_id = $1", [body.msg_id]);
  return { msgId: body.msg_id as string, mailIds: body.mails.map((m: any) => m.mail_id as string) };
}

const m1 = await send(a, 'news@shop.example', ['ann@example.com', 'bob@example.com'], { custom_msg_id: 'camp-1', custom_group_code: 'weekly' });
const m2 = await send(a, 'news@shop.example', ['ann.other@example.com']);
const mb = await send(b, 'news@b.example', ['ann@example.com']);
const [annMail, bobMail] = m1.mailIds as [string, string];
const [otherAnnMail] = m2.mailIds as [string];
const [bMail] = mb.mailIds as [string];

// D is a UTC date; 23:30Z on D is already D+1 in Madrid (UTC+1 or +2).
const D = daysAgo(6, 0);
const at = (days: number, hh: number, mm = 0) => new Date(D.getTime() + days * DAY + (hh * 60 + mm) * 60_000);
const local = (days: number) => isoDate(new Date(D.getTime() + days * DAY));

// The recipient of each is its mail's: ann, bob, ann.other, and B's ann.
async function unsubscribe(tn: Tenant, mailId: string, when: Date, extra: { method?: string; reason?: string; comment?: string } = {}) {
  const { rows } = await dbs.pool.query(
    `INSERT INTO mail_unsubscribes (instance_id, mail_id, method, reason, comment, user_agent, ip, unsubscribed_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'Mozilla/5.0', '203.0.113.9', $6, $6) RETURNING id`,
    [tn.instanceId, mailId, extra.method ?? 'one_click', extra.reason ?? null, extra.comment ?? null, when],
  );
  return rows[0].id as number;
}

async function complaint(tn: Tenant, mailId: string, when: Date, extra: { reportedBy?: string; arrival?: Date } = {}) {
  const { rows } = await dbs.pool.query(
    `INSERT INTO mail_complaints (instance_id, mail_id, feedback_type, reported_by, arrival_date, complained_at)
     VALUES ($1, $2, 'abuse', $3, $4, $5) RETURNING id`,
    [tn.instanceId, mailId, extra.reportedBy ?? null, extra.arrival ?? null, when],
  );
  return rows[0].id as number;
}

const u1 = await unsubscribe(a.tenant, annMail, at(0, 23, 30));
const u2 = await unsubscribe(a.tenant, bobMail, at(2, 10), { method: 'page', reason: 'too_frequent', comment: 'weekly is plenty' });
const u3 = await unsubscribe(a.tenant, otherAnnMail, at(3, 10));
const ub = await unsubscribe(b.tenant, bMail, at(1, 10));

const k1 = await complaint(a.tenant, annMail, at(0, 23, 30), { reportedBy: 'Yahoo!-Mail-Feedback/2.0', arrival: at(0, 20) });
const k2 = await complaint(a.tenant, otherAnnMail, at(2, 10));
const k3 = await complaint(a.tenant, bobMail, at(3, 10));
const kb = await complaint(b.tenant, bMail, at(1, 10));

// ---------------------------------------------------------------------------------------------
// The shared auth and tenancy checks, for each of the three routes.

// 401, 403 (scope, disabled instance) and another instance's slug: test/route-security.test.ts, for every route.
t.test('ip_not_allowed and 405 on the three routes', async (t) => {
  const ipRefused = await makeTenant(dbs.pool, { scopes: ['mail:read'], allowCidrs: ['10.0.0.0/8'] });
  const instanceIpRefused = await makeTenant(dbs.pool, { scopes: ['mail:read'] });
  await setInstanceAllowList(dbs.pool, instanceIpRefused.slug, { add: ['10.0.0.0/8'] });
  for (const path of ROUTES) {
    await t.test(path, async (t) => {
      const control = await rawCall(url + path, a.headers);
      t.equal(control.status, 200, 'control: a mail:read key of the instance is accepted');

      t.equal((await rawCall(url + path, ipRefused.headers)).body.code, 'ip_not_allowed', "the key's allow list refuses loopback");
      t.equal((await rawCall(url + path, instanceIpRefused.headers)).body.code, 'ip_not_allowed', "the instance's allow list refuses loopback");

      const post = await fetch(url + path, { method: 'POST', headers: { ...a.headers, 'content-type': 'application/json' }, body: '{}' });
      t.equal(post.status, 405, 'read-only: no creation through the API');
      t.match(post.headers.get('allow'), /GET/);
      await post.body?.cancel();
    });
  }
});

t.test('the OpenAPI document describes the three listings and their rows', async (t) => {
  const doc = (await get('/v1/openapi.json', {})).body;
  const row = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema.properties.data.items;
  const params = (path: string) => doc.paths[path].get.parameters.map((p: any) => p.name).sort();
  t.same(Object.keys(row('/v1/mail-restrictions').properties).sort(),
    ['bounce_class', 'bounce_reason', 'deleted_at', 'id', 'reason', 'recipient', 'restricted_at', 'scope'], 'the spec fields and the bounce that caused it');
  t.same(params('/v1/mail-restrictions'), ['active', 'page', 'page_size', 'reason', 'recipient']);
  t.same(doc.paths['/v1/mail-restrictions'].get.parameters.find((p: any) => p.name === 'reason').schema.enum,
    ['unspecified', 'unsubscribe', 'soft_bounce', 'hard_bounce']);
  t.same(Object.keys(row('/v1/mail-unsubscribes').properties).sort(), ['comment', 'custom_group_code', 'custom_msg_id', 'id', 'mail_id', 'method',
    'msg_id', 'reason', 'recipient', 'sender', 'subject', 'unsubscribed_at', 'updated_at']);
  t.same(Object.keys(row('/v1/mail-complaints').properties).sort(), ['arrival_date', 'complained_at', 'custom_group_code', 'custom_msg_id',
    'feedback_type', 'id', 'mail_id', 'msg_id', 'recipient', 'reported_by', 'sender', 'subject']);
  for (const path of ['/v1/mail-unsubscribes', '/v1/mail-complaints']) {
    t.same(params(path), ['end_date', 'mail_id', 'msg_id', 'page', 'page_size', 'recipient', 'recipient_operator', 'start_date', 'tz'], path);
  }
  for (const path of ROUTES) t.ok(doc.paths[path].get.description, `${path} is described`);
});

// ---------------------------------------------------------------------------------------------
// GET /v1/mail-restrictions


t.test('rows: the spec fields and the bounce that caused it, scope null, ISO date-times, newest first, no retention cut', async (t) => {
  const r = await get('/v1/mail-restrictions');
  t.equal(r.status, 200);
  restrictionPage(r.body);
  t.same(r.body.data.map((x: any) => x.id), ALL, 'restricted_at desc, then id desc on a tie; two-year-old row included');
  t.same(r.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: null, total_pages: null });
  for (const row of r.body.data) {
    t.same(Object.keys(row).sort(), ['bounce_class', 'bounce_reason', 'deleted_at', 'id', 'reason', 'recipient', 'restricted_at', 'scope'], `row ${row.id} keys`);
    t.equal(row.scope, null, `row ${row.id} scope is null`);
  }
  t.same(r.body.data[1], {
    id: bobFirst,
    recipient: 'bob.smith@example.com',
    reason: 'unsubscribe',
    scope: null,
    restricted_at: daysAgo(2).toISOString(),
    deleted_at: daysAgo(2, 18).toISOString(),
    bounce_reason: null,
    bounce_class: null,
  }, 'a lifted restriction, address stored lower-case, UTC ISO timestamps; no bounce caused it');
  t.equal(r.body.data[0].deleted_at, null, 'in force: deleted_at null');
});

t.test('recipient: partial and case-insensitive, wildcards literal', async (t) => {
  t.same(await ids('/v1/mail-restrictions?recipient=BOB.SMITH'), [bobAgain, bobFirst]);
  t.same(await ids('/v1/mail-restrictions?recipient=Ann@Example.COM'), [hardAnn]);
  t.same(await ids('/v1/mail-restrictions?recipient=other.TEST'), [softCarol]);
  t.same(await ids('/v1/mail-restrictions?recipient=%40example.com'), [bobAgain, bobFirst, sameTime, hardAnn, panelDave]);
  t.same(await ids('/v1/mail-restrictions?recipient=_'), [], '_ is a character, not a wildcard');
  t.same(await ids('/v1/mail-restrictions?recipient=%25'), [], '% is a character, not a wildcard');
  t.same(await ids('/v1/mail-restrictions?recipient='), ALL, 'empty value: no filter');
});

t.test('reason: one value of the vocabulary, anything else 422 enum', async (t) => {
  t.same(await ids('/v1/mail-restrictions?reason=unsubscribe'), [bobAgain, bobFirst]);
  t.same(await ids('/v1/mail-restrictions?reason=hard_bounce'), [sameTime, hardAnn, ancient]);
  t.same(await ids('/v1/mail-restrictions?reason=soft_bounce'), [softCarol]);
  t.same(await ids('/v1/mail-restrictions?reason=unspecified'), [panelDave]);
  const bad = await get('/v1/mail-restrictions?reason=bogus');
  t.equal(bad.status, 422);
  t.equal(bad.body.code, 'validation_error');
  t.same(bad.body.errors, [{
    pointer: '/reason',
    code: 'enum',
    message: "Input should be 'unspecified', 'unsubscribe', 'soft_bounce', 'hard_bounce'",
    params: { expected: "'unspecified', 'unsubscribe', 'soft_bounce', 'hard_bounce'" },
  }]);
  t.equal((await get('/v1/mail-restrictions?reason=Unsubscribe')).status, 422, 'the vocabulary is case-sensitive');
  t.equal((await get('/v1/mail-restrictions?reason=unsubscribed')).body.errors[0].code, 'enum', 'the old spelling is not accepted');
});

t.test('active: true only in force, false only lifted, omitted all; a bad boolean is 422 bool_parsing', async (t) => {
  t.same(await ids('/v1/mail-restrictions?active=true'), [bobAgain, sameTime, hardAnn, panelDave, ancient]);
  t.same(await ids('/v1/mail-restrictions?active=false'), [bobFirst, softCarol]);
  t.same(await ids('/v1/mail-restrictions'), ALL);
  t.same(await ids('/v1/mail-restrictions?active='), ALL, 'empty value: no filter');
  t.same(await ids('/v1/mail-restrictions?reason=unsubscribe&active=false&recipient=bob'), [bobFirst], 'filters combine');
  const bad = await get('/v1/mail-restrictions?active=yes');
  t.equal(bad.status, 422);
  t.same(bad.body.errors, [{ pointer: '/active', code: 'bool_parsing', message: 'Input should be a valid boolean' }]);
});

t.test('pagination: has_more, pages, page_size bounds', async (t) => {
  const p1 = await get('/v1/mail-restrictions?page_size=3');
  t.same(p1.body.data.map((x: any) => x.id), ALL.slice(0, 3));
  t.same(p1.body.pagination, { page: 1, page_size: 3, has_more: true, total_items: null, total_pages: null });
  const p2 = await get('/v1/mail-restrictions?page_size=3&page=2');
  t.same(p2.body.data.map((x: any) => x.id), ALL.slice(3, 6));
  t.equal(p2.body.pagination.has_more, true);
  const p3 = await get('/v1/mail-restrictions?page_size=3&page=3');
  t.same(p3.body.data.map((x: any) => x.id), ALL.slice(6));
  t.equal(p3.body.pagination.has_more, false);
  const exact = await get('/v1/mail-restrictions?page_size=7');
  t.equal(exact.body.pagination.has_more, false, 'a page that ends exactly at the last row has no more');
  t.equal((await get('/v1/mail-restrictions?page_size=101')).body.errors[0].code, 'less_than_equal');
  t.equal((await get('/v1/mail-restrictions?page=0')).body.errors[0].code, 'greater_than_equal');
});

t.test("another instance's restrictions never show, and it sees only its own", async (t) => {
  const seenByA = await ids('/v1/mail-restrictions?recipient=ann@example.com');
  t.same(seenByA, [hardAnn], "B's restriction of the same address is not A's");
  t.notOk((await ids('/v1/mail-restrictions?page_size=100')).includes(otherOnly));
  t.same(await ids('/v1/mail-restrictions', b.headers), [otherOnly, otherAnn].sort((x, y) => y - x));
});

// ---------------------------------------------------------------------------------------------
// Unsubscribe and complaint event logs


t.test('unsubscribes: rows and their mail, newest first', async (t) => {
  const r = await get('/v1/mail-unsubscribes');
  t.equal(r.status, 200);
  unsubscribePage(r.body);
  t.same(r.body.data.map((x: any) => x.id), [u3, u2, u1]);
  t.same(r.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: null, total_pages: null });
  t.same(r.body.data[1], {
    id: u2,
    mail_id: bobMail,
    msg_id: m1.msgId,
    recipient: 'bob@example.com',
    sender: 'news@shop.example',
    subject: 'Weekly news',
    method: 'page',
    reason: 'too_frequent',
    comment: 'weekly is plenty',
    unsubscribed_at: at(2, 10).toISOString(),
    updated_at: at(2, 10).toISOString(),
    custom_msg_id: 'camp-1',
    custom_group_code: 'weekly',
  });
  t.notMatch(JSON.stringify(r.body), /203\.0\.113\.9|Mozilla/, 'the unsubscriber’s IP and user agent are not exposed');
});

/** The filters both event logs share, with the same meaning as in the activity listings. */
function eventLogFilters(t: Test, path: string, expect: {
  all: number[]; annEq: number[]; annPrefix: number[]; bobMail: number[]; msg1: number[];
  fromDay1Utc: number[]; day1Madrid: number[]; toDay0: number[];
}) {
  return t.test(`${path}: filters`, async (t) => {
    t.same(await ids(path), expect.all, 'no filter');
    t.same(await ids(`${path}?recipient=ann@example.com`), expect.annEq, 'recipient exact by default');
    t.same(await ids(`${path}?recipient=ANN@Example.com`), expect.annEq, 'recipient compared case-insensitively');
    t.same(await ids(`${path}?recipient=ann@example.com&recipient_operator=eq`), expect.annEq);
    t.same(await ids(`${path}?recipient=ann&recipient_operator=starts_with`), expect.annPrefix, 'prefix');
    t.same(await ids(`${path}?recipient=ann`), [], 'a prefix without starts_with matches nothing');
    t.same(await ids(`${path}?recipient=an_&recipient_operator=starts_with`), [], '_ is literal in a prefix');
    t.same(await ids(`${path}?recipient_operator=starts_with`), expect.all, 'operator ignored without recipient');
    t.same(await ids(`${path}?mail_id=${bobMail}`), expect.bobMail, 'mail_id');
    t.same(await ids(`${path}?msg_id=${m1.msgId}`), expect.msg1, 'msg_id (of the mail)');
    t.same(await ids(`${path}?msg_id=${m1.msgId}&recipient=bob@example.com`), expect.bobMail, 'filters combine');
    t.same(await ids(`${path}?start_date=${local(1)}`), expect.fromDay1Utc, 'start_date in UTC (the instance has no zone)');
    t.same(await ids(`${path}?start_date=${local(1)}&end_date=${local(1)}&tz=Europe/Madrid`), expect.day1Madrid, '23:30Z is the next day in Madrid');
    t.same(await ids(`${path}?end_date=${local(0)}`), expect.toDay0, 'end_date inclusive');
    t.same(await ids(`${path}?start_date=${isoDate(new Date(Date.now() + 2 * DAY))}`), [], 'nothing in the future');
    const tz = await get(`${path}?tz=Mars/Olympus`);
    t.equal(tz.status, 422);
    t.same(tz.body.errors.map((e: any) => [e.pointer, e.code]), [['/tz', 'value_error.timezone']]);
    t.same((await get(`${path}?start_date=2026-13-40`)).body.errors.map((e: any) => [e.pointer, e.code]), [['/start_date', 'date_parsing']]);
    t.same((await get(`${path}?start_date=${local(2)}&end_date=${local(1)}`)).body.errors.map((e: any) => [e.pointer, e.code]),
      [['/end_date', 'value_error.date_range']]);
    t.same((await get(`${path}?recipient=a&recipient_operator=contains`)).body.errors.map((e: any) => [e.pointer, e.code]),
      [['/recipient_operator', 'enum']]);
    const p1 = await get(`${path}?page_size=2`);
    t.same(p1.body.data.map((x: any) => x.id), expect.all.slice(0, 2));
    t.equal(p1.body.pagination.has_more, true);
    const p2 = await get(`${path}?page_size=2&page=2`);
    t.same(p2.body.data.map((x: any) => x.id), expect.all.slice(2));
    t.equal(p2.body.pagination.has_more, false);
  });
}

eventLogFilters(t, '/v1/mail-unsubscribes', {
  all: [u3, u2, u1], annEq: [u1], annPrefix: [u3, u1], bobMail: [u2], msg1: [u2, u1],
  fromDay1Utc: [u3, u2], day1Madrid: [u1], toDay0: [u1],
});

t.test('complaints: rows and their mail, newest first', async (t) => {
  const r = await get('/v1/mail-complaints');
  t.equal(r.status, 200);
  complaintPage(r.body);
  t.same(r.body.data.map((x: any) => x.id), [k3, k2, k1]);
  t.same(r.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: null, total_pages: null });
  t.same(r.body.data[2], {
    id: k1,
    mail_id: annMail,
    msg_id: m1.msgId,
    recipient: 'ann@example.com',
    sender: 'news@shop.example',
    subject: 'Weekly news',
    feedback_type: 'abuse',
    reported_by: 'Yahoo!-Mail-Feedback/2.0',
    arrival_date: at(0, 20).toISOString(),
    complained_at: at(0, 23, 30).toISOString(),
    custom_msg_id: 'camp-1',
    custom_group_code: 'weekly',
  });
  t.match(r.body.data[0], { reported_by: null, arrival_date: null }, 'optional report fields are null when absent');
});

eventLogFilters(t, '/v1/mail-complaints', {
  all: [k3, k2, k1], annEq: [k1], annPrefix: [k2, k1], bobMail: [k3], msg1: [k3, k1],
  fromDay1Utc: [k3, k2], day1Madrid: [k1], toDay0: [k1],
});

t.test("event logs: another instance's rows never show, even by its mail or msg id", async (t) => {
  t.same(await ids('/v1/mail-unsubscribes', b.headers), [ub]);
  t.same(await ids('/v1/mail-complaints', b.headers), [kb]);
  for (const path of ['/v1/mail-unsubscribes', '/v1/mail-complaints']) {
    t.same(await ids(`${path}?mail_id=${bMail}`), [], `${path}: B's mail_id through A's key`);
    t.same(await ids(`${path}?msg_id=${mb.msgId}`), [], `${path}: B's msg_id through A's key`);
    t.same(await ids(`${path}?mail_id=${annMail}`, b.headers), [], `${path}: A's mail_id through B's key`);
  }
});

// Last: it moves a mail out of the window.
t.test('event logs are bounded by the retention of their mail', async (t) => {
  await dbs.pool.query("UPDATE mails SET received_at = now() - interval '4 months' WHERE mail_id = $1", [otherAnnMail]);
  t.same(await ids('/v1/mail-unsubscribes'), [u2, u1], 'an unsubscribe of a mail outside the window is gone before the purge');
  t.same(await ids('/v1/mail-complaints'), [k3, k1], 'so is a complaint');
  t.same(await ids('/v1/mail-restrictions?recipient=bob.smith'), [bobAgain, bobFirst], 'restrictions have no such cut');
  await dbs.pool.query('DELETE FROM mails WHERE mail_id = $1', [bobMail]);
  t.same(await ids('/v1/mail-unsubscribes'), [u1], 'purged mail: its event rows went with it');
  t.same(await ids('/v1/mail-complaints'), [k1]);
});
