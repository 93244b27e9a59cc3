import t from 'tap';
import { setDomainChecks } from '../domain/domains/domains.js';
import { MAX_IDEMPOTENCY_KEY } from '../domain/idempotency-key.js';
import { acceptSendOnce, purgeSendKeys } from '../domain/mail/idempotency.js';
import { deleteTemplate, importExternalTemplate, setTemplateStatus } from '../domain/templates/templates.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { makeSenders } from './helpers/fixtures.js';
import { startApiBench } from './helpers/web.js';

/**
 * Idempotent sends (issue 41, docs/sending.md "Idempotency"): POST /v1/mails/send's
 * Idempotency-Key through the real web app and Postgres, and the SMTP door's Message-ID rule
 * through domain/mail/idempotency.ts directly (its listener is another file's).
 */
const { dbs, url, a, b } = await startApiBench(t, 'mailsidem', ['mail:send', 'mail:read']);
await makeSenders(dbs.pool, a.tenant, { domain: 'idem.example', senders: [{ email: 'news', name: 'News' }] });
await makeSenders(dbs.pool, a.tenant, { domain: 'later.example', senders: [{ email: 'hi', name: 'Hi' }] });
await makeSenders(dbs.pool, a.tenant, { domain: 'tpl-idem.example', senders: [{ email: 'tpl', name: 'Tpl' }] });
await makeSenders(dbs.pool, b.tenant, { domain: 'b-idem.example', senders: [{ email: 'news', name: 'B' }] });
const queue = jobQueue(dbs.databaseUrl);

interface Answer {
  status: number;
  text: string;
  body: any;
}

async function send(body: unknown, key?: string, headers = a.headers): Promise<Answer> {
  const res = await fetch(`${url}/v1/mails/send`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

const mailBody = (over: Record<string, unknown> = {}) => ({
  from: 'news@idem.example',
  to: [{ email: 'ann@example.com', name: 'Ann' }, { email: 'bob@example.com' }],
  subject: 'Order {{n}}',
  text: 'Your order',
  variables: { n: 991 },
  ...over,
});

const count = async (sql: string, params: unknown[] = []) => Number((await dbs.pool.query(sql, params)).rows[0].n);
/** What a send writes and queues: messages, mails and send jobs of the whole database. */
const written = async () => ({
  messages: await count('SELECT count(*) AS n FROM messages'),
  mails: await count('SELECT count(*) AS n FROM mails'),
  jobs: await count("SELECT count(*) AS n FROM pgboss.job WHERE name = 'mail.send'"),
});

t.test('the same key and body: the first 202 byte for byte, nothing new written or queued', async (t) => {
  const first = await send(mailBody(), 'order-991');
  t.equal(first.status, 202);
  t.equal(first.body.mails.length, 2);
  const after = await written();
  // The same request with its keys in another order is the same body.
  const reordered = { variables: { n: 991 }, text: 'Your order', subject: 'Order {{n}}', to: mailBody().to, from: 'news@idem.example' };
  for (const body of [mailBody(), reordered]) {
    const again = await send(body, 'order-991');
    t.equal(again.status, 202);
    t.equal(again.text, first.text, 'byte-equal body: same msg_id and mails');
  }
  t.same(await written(), after, 'no second messages or mails row, no second send job');
  t.equal(await count('SELECT count(*) AS n FROM messages WHERE msg_id = $1', [first.body.msg_id]), 1);

  const fresh = await send(mailBody());
  t.equal(fresh.status, 202);
  t.not(fresh.body.msg_id, first.body.msg_id, 'control: without the header every call is a new send');
});

t.test('another body under the key: 422 idempotency_key_reused, nothing written', async (t) => {
  const first = await send(mailBody(), 'order-992');
  t.equal(first.status, 202);
  const before = await written();
  for (const other of [mailBody({ subject: 'Order {{n}}!' }), mailBody({ to: [...mailBody().to].reverse() }), mailBody({ variables: { n: 992 } })]) {
    const r = await send(other, 'order-992');
    t.equal(r.status, 422);
    t.equal(r.body.code, 'idempotency_key_reused');
  }
  t.same(await written(), before);
  t.equal((await send(mailBody(), 'order-992')).text, first.text, 'the first body still answers its 202');
});

t.test('a retry after the sender and the template changed still answers the first 202', async (t) => {
  const first = await send(mailBody({ from: 'hi@later.example' }), 'sender-change');
  t.equal(first.status, 202);
  await setDomainChecks(a.tenant, dbs.pool, 'later.example', { mx: 'approved', spf: 'failed', dkim: 'approved', dmarc: 'approved' });
  const control = await send(mailBody({ from: 'hi@later.example' }), 'sender-change-new');
  t.same([control.status, control.body.code], [409, 'domain_sender_not_verified'], 'control: a new send is refused now');
  const before = await written();
  const retry = await send(mailBody({ from: 'hi@later.example' }), 'sender-change');
  t.same([retry.status, retry.text], [202, first.text], 'the retry answers as the first call did');

  const template = await importExternalTemplate(a.tenant, dbs.pool, { name: 'Receipt', html: '<p>Receipt {{n}}</p>' });
  await setTemplateStatus(a.tenant, dbs.pool, template.id, 'public');
  const tplBody = { from: 'tpl@tpl-idem.example', to: [{ email: 'cy@example.com' }], subject: 'Receipt', template_id: template.id, variables: { n: 1 } };
  const tplFirst = await send(tplBody, 'template-change');
  t.equal(tplFirst.status, 202);
  await setTemplateStatus(a.tenant, dbs.pool, template.id, 'draft');
  const draft = await send(tplBody, 'template-change-new');
  t.same([draft.status, draft.body.code], [409, 'template_not_public'], 'control: unpublished, a new send is refused');
  t.same((await send(tplBody, 'template-change')).text, tplFirst.text, 'unpublished: the retry answers the first 202');
  await deleteTemplate(a.tenant, dbs.pool, template.id);
  const gone = await send(tplBody, 'template-change-new');
  t.same([gone.status, gone.body.code], [404, 'mail_template_not_found'], 'control: deleted, a new send is 404');
  const after = await send(tplBody, 'template-change');
  t.same([after.status, after.text], [202, tplFirst.text], 'deleted: the retry answers the first 202');
  t.same(await written(), { ...before, messages: before.messages + 1, mails: before.mails + 1, jobs: before.jobs + 1 }, 'only the template send itself was written');
});

t.test('a refused send records no key: its retry is a new attempt', async (t) => {
  const refused = await send(mailBody({ from: 'hi@later.example' }), 'refused-first');
  t.equal(refused.status, 409);
  t.equal(await count("SELECT count(*) AS n FROM send_idempotency_keys WHERE key = 'refused-first'"), 0);
  const ok = await send(mailBody(), 'refused-first');
  t.equal(ok.status, 202, 'the same key with another body is a send, not 422');
});

t.test('concurrent identical requests: one send, every answer the same 202', async (t) => {
  const before = await written();
  const answers = await Promise.all(Array.from({ length: 12 }, () => send(mailBody(), 'concurrent-1')));
  t.same(answers.map((r) => r.status), Array(12).fill(202), `statuses: ${answers.map((r) => r.status)}`);
  t.equal(new Set(answers.map((r) => r.text)).size, 1, 'one body, byte for byte');
  t.same(await written(), { messages: before.messages + 1, mails: before.mails + 2, jobs: before.jobs + 1 }, 'one message, its two mails and their send job');

  // Two bodies at once under one key: one is the send, the other 422 (whichever came second).
  const mid = await written();
  const pair = await Promise.all([send(mailBody(), 'concurrent-2'), send(mailBody({ subject: 'Other' }), 'concurrent-2')]);
  t.same(pair.map((r) => r.status).sort(), [202, 422]);
  t.equal(pair.find((r) => r.status === 422)!.body.code, 'idempotency_key_reused');
  t.same(await written(), { messages: mid.messages + 1, mails: mid.mails + 2, jobs: mid.jobs + 1 });
});

t.test('the key bounds: 1-255 characters, a longer one 422 value_error.idempotency_key', async (t) => {
  const tooLong = await send(mailBody(), 'k'.repeat(MAX_IDEMPOTENCY_KEY + 1));
  t.same([tooLong.status, tooLong.body.errors?.[0]?.code], [422, 'value_error.idempotency_key']);
  const longest = await send(mailBody(), 'k'.repeat(MAX_IDEMPOTENCY_KEY));
  t.equal(longest.status, 202);
  const doc = await (await fetch(`${url}/v1/openapi.json`)).json();
  const header = doc.paths['/v1/mails/send'].post.parameters.find((p: any) => p.in === 'header');
  t.match(header, { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY } });
});

t.test('after 24 hours the key is forgotten: a new send; the retention purge deletes it', async (t) => {
  const first = await send(mailBody(), 'day-old');
  t.equal(first.status, 202);
  await dbs.pool.query("UPDATE send_idempotency_keys SET created_at = created_at - interval '23 hours 59 minutes' WHERE key = 'day-old'");
  t.equal((await send(mailBody(), 'day-old')).text, first.text, 'control: still remembered just inside the 24 hours');
  await dbs.pool.query("UPDATE send_idempotency_keys SET created_at = created_at - interval '2 minutes' WHERE key = 'day-old'");
  const later = await send(mailBody({ subject: 'Another body is fine too' }), 'day-old');
  t.equal(later.status, 202);
  t.not(later.body.msg_id, first.body.msg_id, 'a new send');
  t.equal((await send(mailBody({ subject: 'Another body is fine too' }), 'day-old')).text, later.text, 'the key now answers the new send');

  await dbs.pool.query("UPDATE send_idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'order-991'");
  const live = await count('SELECT count(*) AS n FROM send_idempotency_keys');
  t.equal(await purgeSendKeys(dbs.pool), 1, 'only the key past its window');
  t.equal(await count('SELECT count(*) AS n FROM send_idempotency_keys'), live - 1);
  t.equal(await count("SELECT count(*) AS n FROM send_idempotency_keys WHERE key = 'day-old'"), 1);
});

t.test("another instance's same key is its own", async (t) => {
  const ofA = await send(mailBody(), 'shared-key');
  const ofB = await send(mailBody({ from: 'news@b-idem.example' }), 'shared-key', b.headers);
  t.same([ofA.status, ofB.status], [202, 202]);
  t.not(ofB.body.msg_id, ofA.body.msg_id, "B's send is a send, not A's answer nor a 422");
  t.equal((await send(mailBody(), 'shared-key')).text, ofA.text, "A's retry still answers A's");
  t.equal((await send(mailBody({ from: 'news@b-idem.example' }), 'shared-key', b.headers)).text, ofB.text, "B's retry answers B's");
});

t.test("the SMTP door: a Message-ID already accepted answers its first msg_id whatever the message", async (t) => {
  const messageId = '<20261207.1234@app.example>';
  const req = { from: 'news@idem.example', to: [{ email: 'dee@example.com' }], subject: 'Hi', text: 'One' };
  const first = await acceptSendOnce(a.tenant, dbs.pool, queue, req, { door: 'smtp', key: messageId });
  t.equal(first.replayed, false);
  const before = await written();
  const retry = await acceptSendOnce(a.tenant, dbs.pool, queue, { ...req, text: 'One, re-encoded by the client' }, { door: 'smtp', key: messageId });
  t.same(retry, { accepted: first.accepted, replayed: true }, 'the first answer, though the body differs');
  t.same(await written(), before, 'nothing written');
  await setDomainChecks(a.tenant, dbs.pool, 'idem.example', { mx: 'approved', spf: 'approved', dkim: 'failed', dmarc: 'approved' });
  t.teardown(() => setDomainChecks(a.tenant, dbs.pool, 'idem.example', { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' }));
  t.same(await acceptSendOnce(a.tenant, dbs.pool, queue, req, { door: 'smtp', key: messageId }), retry, 'and after the sender became unverified');
  await t.rejects(acceptSendOnce(a.tenant, dbs.pool, queue, req, { door: 'smtp', key: '<other@app.example>' }), { code: 'domain_sender_not_verified' }, 'control: a new Message-ID meets the gate');
  await setDomainChecks(a.tenant, dbs.pool, 'idem.example', { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });

  // The doors are apart: the same text as an API key is another key.
  const api = await acceptSendOnce(a.tenant, dbs.pool, queue, req, { door: 'api', key: messageId });
  t.equal(api.replayed, false);
  t.not(api.accepted.msg_id, first.accepted.msg_id);
  // Concurrent retries of one message: one send.
  const mid = await written();
  const many = await Promise.all(Array.from({ length: 6 }, () => acceptSendOnce(a.tenant, dbs.pool, queue, req, { door: 'smtp', key: '<burst@app.example>' })));
  t.equal(many.filter((r) => !r.replayed).length, 1, 'one accepted, the others replayed');
  t.equal(new Set(many.map((r) => r.accepted.msg_id)).size, 1);
  t.same(await written(), { messages: mid.messages + 1, mails: mid.mails + 1, jobs: mid.jobs + 1 });
});
