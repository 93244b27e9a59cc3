import t from 'tap';
import { ulid } from 'ulid';
import { compile } from '../domain/validation.js';
import { mailSchema, sendAcceptedSchema } from '../api/schemas/mails.js';
import { collectionSchema } from '../api/schemas/common.js';
import { setDomainChecks } from '../domain/domains/domains.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { startApiBench } from './helpers/web.js';

const scopes = ['mail:send', 'mail:read'];
const { dbs, url, a, b } = await startApiBench(t, 'mailsapi', scopes);
await makeSenders(dbs.pool, a.tenant, { domain: 'shop.example', senders: [{ email: 'news', name: 'News' }] });
await makeSenders(dbs.pool, a.tenant, { domain: 'draft.example', verified: false, senders: [{ email: 'hi', name: 'Hi' }] });
await makeSenders(dbs.pool, b.tenant, { domain: 'b.example', senders: [{ email: 'news', name: 'B' }] });

const accepted = compile(sendAcceptedSchema, 'json');
const mail = compile(mailSchema, 'json');
const mailPage = compile(collectionSchema(mailSchema), 'json');

async function call(method: string, path: string, body?: unknown, headers = a.headers) {
  const res = await fetch(url + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const count = async (sql: string, params: unknown[] = []) => Number((await dbs.pool.query(sql, params)).rows[0].n);

const send = (over: Record<string, unknown> = {}) =>
  call('POST', '/v1/mails/send', {
    from: 'news@shop.example',
    to: [{ email: 'Ann@Example.com', name: 'Ann', variables: { first_name: 'Ann' } }, { email: 'bob@example.com' }],
    subject: 'Hello {{first_name}}',
    html: '<p>Hi {{first_name}}</p>',
    custom_msg_id: 'order-991',
    custom_group_code: 'receipts',
    ...over,
  });

t.test('202: one Mail per recipient sharing msg_id, logs and jobs in one transaction', async (t) => {
  const before = await count("SELECT count(*) AS n FROM pgboss.job WHERE name = 'mail.send'");
  const r = await send();
  t.equal(r.status, 202);
  accepted(r.body);
  t.equal(r.body.mails.length, 2);
  t.same(r.body.mails.map((m: any) => [m.to, m.status]), [['ann@example.com', 1], ['bob@example.com', 1]]);
  t.not(r.body.mails[0].mail_id, r.body.mails[1].mail_id);
  const rows = (await dbs.pool.query('SELECT msg_id, subject, status FROM mails WHERE msg_id = $1 ORDER BY id', [r.body.msg_id])).rows;
  t.same(rows.map((x) => [x.subject, x.status]), [['Hello Ann', 1], ['Hello ', 1]], 'subject merge tags filled per recipient');
  t.equal(await count('SELECT count(*) AS n FROM mail_logs WHERE mail_id = ANY($1)', [r.body.mails.map((m: any) => m.mail_id)]), 2);
  t.equal(await count("SELECT count(*) AS n FROM pgboss.job WHERE name = 'mail.send'"), before + 1, 'one send job for the message\'s mails');
  t.same(
    (await dbs.pool.query("SELECT data->'mail_ids' AS ids FROM pgboss.job WHERE name = 'mail.send' ORDER BY created_on DESC LIMIT 1")).rows[0].ids,
    r.body.mails.map((m: any) => m.mail_id),
    'naming every mail of the message, in order',
  );

  const got = await call('GET', `/v1/mails/${r.body.mails[0].mail_id}`);
  t.equal(got.status, 200);
  mail(got.body);
  t.match(got.body, {
    mail_id: r.body.mails[0].mail_id, msg_id: r.body.msg_id, to: 'ann@example.com', subject: 'Hello Ann', sender: 'news@shop.example',
    status: 1, opens: 0, clicks: 0, queued_at: null, sent_at: null, schedule_at: null, delay: null,
    custom_msg_id: 'order-991', custom_group_code: 'receipts',
  });
  const logs = await call('GET', `/v1/mails/${r.body.mails[0].mail_id}/logs`);
  t.equal(logs.status, 200);
  t.match(logs.body.data, [{ status: 1, reason: 'accepted' }]);
});

t.test('refusals write nothing', async (t) => {
  const mailsBefore = await count('SELECT count(*) AS n FROM mails');
  const unverified = await send({ from: 'hi@draft.example' });
  t.equal(unverified.status, 409);
  t.equal(unverified.body.code, 'domain_sender_not_verified');
  const unknownSender = await send({ from: 'news@b.example' });
  t.equal(unknownSender.status, 422);
  t.match(unknownSender.body.errors, [{ pointer: '/from', code: 'value_error.unknown_sender' }]);
  const template = await send({ html: undefined, template_id: 12 });
  t.equal(template.status, 404);
  t.equal(template.body.code, 'mail_template_not_found');
  const noBody = await send({ html: undefined });
  t.equal(noBody.status, 422);
  t.match(noBody.body.errors, [{ pointer: '/html', code: 'missing' }]);
  const dup = await send({ to: [{ email: 'x@example.com' }, { email: 'X@example.com' }] });
  t.equal(dup.status, 422);
  t.match(dup.body.errors, [{ pointer: '/to/1/email', code: 'value_error.duplicate_recipient' }]);
  const badTags = await send({ subject: 'Hi {{ unclosed' });
  t.equal(badTags.status, 422);
  t.match(badTags.body.errors, [{ pointer: '/subject', code: 'value_error.merge_tags' }]);
  // Merge tags are closed to the server's files and bounded in work.
  const include = await send({ subject: '{% include "package.json" %}' });
  t.equal(include.status, 422);
  t.match(include.body.errors, [{ pointer: '/subject', code: 'value_error.merge_tags' }]);
  t.notMatch(JSON.stringify(include.body), /dependencies|allowScripts/, 'no file content in the answer');
  const render = await send({ html: '{% render "README.md" %}' });
  t.match(render.body.errors, [{ pointer: '/html', code: 'value_error.merge_tags' }]);
  const slow = await send({ text: '{% for a in (1..3000) %}{% for b in (1..3000) %}x{% endfor %}{% endfor %}' });
  t.equal(slow.status, 422);
  t.match(slow.body.errors, [{ pointer: '/text', code: 'value_error.merge_tags' }]);
  const typo = await send({ track_open: false });
  t.equal(typo.status, 422);
  t.match(typo.body.errors, [{ pointer: '/track_open', code: 'extra_forbidden' }]);
  const headers = await send({ headers: { 'Message-ID': '<x@y>', 'X-Ok': 'fine', 'Bad Name': 'x', 'X-Inject': 'a\r\nBcc: evil@example.com' } });
  t.equal(headers.status, 422);
  t.same(headers.body.errors.map((e: any) => [e.pointer, e.code]), [
    ['/headers/Message-ID', 'value_error.header_protected'],
    ['/headers/Bad Name', 'value_error.header_name'],
    ['/headers/X-Inject', 'value_error.header_value'],
  ]);
  const tooMany = await send({ to: Array.from({ length: 501 }, (_, i) => ({ email: `r${i}@example.com` })) });
  t.equal(tooMany.status, 422);
  t.match(tooMany.body.errors, [{ pointer: '/to', code: 'too_long' }]);
  const big = await send({ html: 'x'.repeat(10 * 1024 * 1024) });
  t.equal(big.status, 413);
  t.equal(big.body.max_bytes, 10 * 1024 * 1024);
  // Under the body limit but over the worker's render bound (RENDER_MAX_BODY_BYTES, 2 MiB): refused
  // here, not accepted and dropped later; counted in UTF-8 bytes (ñ is two).
  const overRender = await send({ html: `<p>${'ñ'.repeat(1024 * 1024)}</p>`, text: 'x'.repeat(2 * 1024 * 1024) });
  t.equal(overRender.status, 422);
  t.same(overRender.body.errors.map((e: any) => [e.pointer, e.code, e.params?.max_bytes]), [['/html', 'value_error.too_large', 2 * 1024 * 1024]], 'html over the bound; text exactly at it passes');
  t.equal(await count('SELECT count(*) AS n FROM mails'), mailsBefore, 'no mail row from any refusal');
});

t.test('bandwidth: token bucket 429 with Retry-After, a send above the burst is 413', async (t) => {
  const c = await makeTenant(dbs.pool, { scopes });
  await makeSenders(dbs.pool, c.tenant, { domain: 'c.example', senders: [{ email: 'news', name: 'C' }] });
  await dbs.pool.query('UPDATE instances SET send_rate_per_second = 0.5, send_burst = 3 WHERE id = $1', [c.tenant.instanceId]);
  const body = (n: number) => ({ from: 'news@c.example', to: Array.from({ length: n }, (_, i) => ({ email: `r${i}@example.com` })), subject: 's', text: 't' });
  t.equal((await call('POST', '/v1/mails/send', body(2), c.headers)).status, 202);
  const limited = await call('POST', '/v1/mails/send', body(2), c.headers);
  t.equal(limited.status, 429);
  t.equal(limited.body.code, 'rate_limit_exceeded');
  t.equal(limited.headers.get('retry-after'), '2', '1 token short at 0.5/s');
  t.equal((await call('POST', '/v1/mails/send', body(1), c.headers)).status, 202, 'what is left is still usable');
  const over = await call('POST', '/v1/mails/send', body(4), c.headers);
  t.equal(over.status, 413);
  t.equal(over.body.code, 'request_too_large');
  t.equal(await count('SELECT count(*) AS n FROM mails WHERE instance_id = $1', [c.tenant.instanceId]), 3);
});

// Another instance's mail_id (404 mail_not_found, no data): test/route-security.test.ts.
t.test('mail by id: not found, outside retention', async (t) => {
  const r = await send({ to: [{ email: 'z@example.com' }] });
  const id = r.body.mails[0].mail_id;
  t.equal((await call('GET', '/v1/mails/not-an-id')).body.code, 'mail_not_found');
  t.equal((await call('GET', `/v1/mails/${ulid()}`)).body.code, 'mail_not_found');
  const old = ulid(Date.now() - 100 * 24 * 3600 * 1000);
  const tooOld = await call('GET', `/v1/mails/${old}`);
  t.equal(tooOld.status, 404);
  t.equal(tooOld.body.code, 'mail_outside_retention');
  t.equal((await call('GET', `/v1/mails/${old}/logs`)).body.code, 'mail_outside_retention');
  // A row still present but older than the window answers the same (the purge may lag).
  await dbs.pool.query('DELETE FROM mail_logs WHERE mail_id = $1', [id]);
  await dbs.pool.query('UPDATE mails SET mail_id = $1 WHERE mail_id = $2', [old, id]);
  t.equal((await call('GET', `/v1/mails/${old}`)).body.code, 'mail_outside_retention');
});

t.test('GET /v1/mails: filters, window and pagination', async (t) => {
  const r1 = await send({ to: [{ email: 'list.one+x@example.com' }], subject: 'Weekly DIGEST', custom_msg_id: 'L1', custom_group_code: 'digest' });
  const r2 = await send({ to: [{ email: 'list.two@example.com' }], subject: 'Receipt', custom_msg_id: 'L2', custom_group_code: 'receipts' });
  const all = await call('GET', '/v1/mails?page_size=100');
  mailPage(all.body);
  t.equal(all.body.pagination.total_items, null);
  t.equal(all.body.data[0].mail_id, r2.body.mails[0].mail_id, 'newest first');
  const ids = (q: string) => call('GET', `/v1/mails?${q}`).then((x) => x.body.data.map((m: any) => m.mail_id));
  t.same(await ids('recipient=list.one%2Bx@example.com'), [r1.body.mails[0].mail_id]);
  t.same(await ids('recipient=list.one+x@example.com'), [], 'an unencoded + reads as a space');
  t.same(await ids('recipient=LIST.&recipient_operator=starts_with'), [r2.body.mails[0].mail_id, r1.body.mails[0].mail_id]);
  t.same(await ids('recipient_operator=starts_with&custom_group_code=digest'), [r1.body.mails[0].mail_id], 'operator ignored without recipient');
  t.same(await ids('subject=digest'), [r1.body.mails[0].mail_id]);
  t.same(await ids('custom_msg_id=L2'), [r2.body.mails[0].mail_id]);
  t.same(await ids(`msg_id=${r1.body.msg_id}`), [r1.body.mails[0].mail_id]);
  t.same(await ids(`mail_id=${r2.body.mails[0].mail_id}`), [r2.body.mails[0].mail_id]);
  t.same(await ids('status=3'), []);
  t.same(await ids('opened=opened'), []);
  t.equal((await call('GET', '/v1/mails?status=9')).status, 422);
  t.equal((await call('GET', '/v1/mails?opened=maybe')).body.errors[0].code, 'enum');
  const tomorrow = new Date(Date.now() + 2 * 86400_000).toISOString().slice(0, 10);
  t.same(await ids(`start_date=${tomorrow}`), []);
  const p1 = await call('GET', '/v1/mails?page_size=1');
  t.equal(p1.body.pagination.has_more, true);
  t.notOk((await call('GET', '/v1/mails?page_size=100', undefined, b.headers)).body.data.length, 'other instance sees none');
  await dbs.pool.query("UPDATE mails SET received_at = now() - interval '4 months' WHERE mail_id = $1", [r1.body.mails[0].mail_id]);
  t.same(await ids('custom_group_code=digest'), [], 'the 3-month window applies as a filter');
});
