import { readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import t from 'tap';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion, setTermActive } from '../domain/consent/terms.js';
import { createDataset } from '../domain/datasets/datasets.js';
import { createField } from '../domain/fields/catalog.js';
import { createForm, setFormActive, updateForm } from '../domain/forms/definition.js';
import { feedDataset } from '../domain/forms/feed.js';
import { MAX_IDEMPOTENCY_KEY } from '../domain/idempotency-key.js';
import { sendSubmissionMail } from '../domain/forms/mails.js';
import { setInstanceLimits } from '../domain/tenancy/instances.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, readMailbox, startSendStack, waitFor } from './helpers/send-stack.js';

/**
 * Forms (issue 15) over HTTP, end to end: GET /v1/forms and its filters, the submission rules
 * (every error code, several at once in one 422), idempotency (retry, reuse, 20 concurrent
 * duplicates, a retry after the form changed), a deactivated form, the double confirmation read from the real mailbox and
 * followed (then the resolver allows and the dataset has the contact), the auto-reply and team
 * notice of a form without confirmation, and the plan quota counting every mail generated.
 */
const PUBLIC_URL = 'https://forms.cartero.test';
const stack = await startSendStack(t, { label: 'formsapi', publicUrl: PUBLIC_URL });
const pool = stack.dbs.pool;
const a = await makeTenant(pool, { scopes: ['form:read', 'form:write', 'consent:read', 'dataset:read', 'mail:read'] });
const api = mailApi(stack.url, a.headers);

const [senderId] = await makeSenders(pool, a.tenant, { domain: 'forms.example', senders: [{ email: 'hello', name: 'Hello' }] });
await setInstanceLimits(pool, a.slug, { monthly_quota: 1000 });
await createField(a.tenant, pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 20 });
await createField(a.tenant, pool, { key: 'age', name: 'Age', type: 'number', min: 0, max: 120 });
const N = (await createPurpose(a.tenant, pool, { name: 'Newsletter' })).id;
const news = await createTerm(a.tenant, pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [N], channels: ['mail'] });
await addTermVersion(a.tenant, pool, news.id, { version: 'v1', body: 'Old text.' });
await addTermVersion(a.tenant, pool, news.id, { version: 'v2', body: 'We write twice a month.' });
await setCurrentVersion(a.tenant, pool, news.id, 'v2');
const sms = await createTerm(a.tenant, pool, { name: 'SMS offers', type: 'marketing', purposeIds: [N], channels: ['sms'] });
await addTermVersion(a.tenant, pool, sms.id, { version: '1', body: 'Texts now and then.' });
await setCurrentVersion(a.tenant, pool, sms.id, '1');
const versionIds = (await pool.query('SELECT version, id FROM consent_term_versions ORDER BY id')).rows.map((r) => r.id as number);
const [v1, v2, smsV] = versionIds as [number, number, number];
const dataset = await createDataset(a.tenant, pool, {
  name: 'Subscribers', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'first_name', required: false }],
});

const newsletter = await createForm(a.tenant, pool, {
  name: 'Newsletter', kind: 'advanced', type: 'registration', dataset_id: dataset.id, requires_confirmation: true, auto_reply_sender_id: senderId!,
  settings: { title: 'Join us', design: { primary_color: '#00aa77' } },
  items: [
    { type: 'field', field_key: 'email', label: 'Email', required: true },
    { type: 'field', field_key: 'first_name', label: 'Name' },
    { type: 'field', field_key: 'age', label: 'Age' },
    { type: 'field', field_key: 'phone', label: 'Mobile' },
    { type: 'consent', term_id: news.id, label: 'I accept the newsletter', required: true },
    { type: 'separator' },
    { type: 'consent', term_id: sms.id, channel: 'sms', label: 'Texts too' },
    { type: 'text', text: 'We never share your data.' },
  ],
});
const instant = await createForm(a.tenant, pool, {
  name: 'Instant contact', kind: 'consent', type: 'registration', auto_reply_sender_id: senderId!,
  auto_reply: { subject: 'Thanks, {{email}}', text: 'We got it, {{email}}.' }, team_notice_emails: ['team@forms-team.test'],
  items: [{ type: 'field', field_key: 'email', required: true }, { type: 'consent', term_id: news.id, required: false }],
});
const [email, firstName, age, phone, newsItem, separator, smsItem, textItem] = newsletter.items.map((i) => i.id) as number[];

stack.spawnWorker();

/** A complete, valid submission of the newsletter form. */
const annBody = (extra: object = {}) => ({
  items: [
    { item_id: email, value: 'Ann@Example.org' },
    { item_id: firstName, value: 'Ann' },
    { item_id: age, value: null },
    { item_id: phone, value: null },
    { item_id: newsItem, value: true, term_version_id: v2 },
    { item_id: smsItem, value: false, term_version_id: smsV },
  ],
  ...extra,
});

const submit = (formId: number, body: unknown, key?: string, as = api) =>
  key === undefined
    ? as.call('POST', `/v1/forms/${formId}/submissions`, body)
    : fetch(`${stack.url}/v1/forms/${formId}/submissions`, {
        method: 'POST',
        headers: { ...a.headers, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() }));

t.test('GET /v1/forms: every item with its id, type and own fields; filters', async (t) => {
  const one = await api.call('GET', `/v1/forms/${newsletter.id}`);
  t.equal(one.status, 200);
  t.same(one.body, newsletter, 'the CLI prints the form as GET /v1/forms/{id} shows it');
  t.match(one.body, {
    name: 'Newsletter', kind: 'advanced', type: 'registration', dataset_id: dataset.id, requires_confirmation: true, is_active: true,
    is_default: false, auto_reply_sender_id: senderId, public_token: /^[A-Za-z0-9_-]{24}$/, settings: { title: 'Join us' },
  });
  t.same(one.body.items.map((i: any) => i.type), ['field', 'field', 'field', 'field', 'consent', 'separator', 'consent', 'text'], 'display order');
  t.same(one.body.items[4], { id: newsItem, type: 'consent', term_id: news.id, term_version_id: v2, channel: 'mail', label: 'I accept the newsletter', required: true });
  t.same(one.body.items[5], { id: separator, type: 'separator' });
  t.same(one.body.items[7], { id: textItem, type: 'text', text: 'We never share your data.' });
  t.match(one.body.items[2], { id: age, type: 'field', field_key: 'age', field_type: 'number', label: 'Age', required: false });

  const all = await api.call('GET', '/v1/forms');
  t.same(all.body.data.map((f: any) => f.id), [newsletter.id, instant.id]);
  t.same(all.body.data[0], one.body, 'listing items equal GET /v1/forms/{id}');
  t.match(all.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 2, total_pages: 1 });
  const ids = async (q: string) => (await api.call('GET', `/v1/forms?${q}`)).body.data.map((f: any) => f.id);
  t.same(await ids('kind=consent'), [instant.id]);
  t.same(await ids('type=update'), []);
  t.same(await ids('requires_confirmation=true'), [newsletter.id]);
  t.same(await ids('name=NEWS'), [newsletter.id], 'name: partial, case-insensitive');
  t.same(await ids('is_active=true&auto_reply_sender_id=' + senderId), [newsletter.id, instant.id]);
  t.same(await ids('page_size=1&page=2'), [instant.id]);
  t.equal((await api.call('GET', '/v1/forms?kind=other')).status, 422);
  t.match((await api.call('GET', '/v1/forms/999999')).body, { status: 404, code: 'form_not_found' });
  // Scopes (form:read reads, form:write submits, neither implies the other): test/route-security.test.ts.
});

t.test('every completeness and value failure is reported together in one 422', async (t) => {
  const r = await submit(newsletter.id, {
    items: [
      { item_id: email, value: 'not an address' },
      { item_id: email, value: 'ann@example.org' },
      { item_id: age, value: 'old' },
      { item_id: 999999, value: 'x' },
      { item_id: separator, value: null },
      { item_id: newsItem, value: true, term_version_id: v1 },
    ],
  });
  t.equal(r.status, 422);
  t.equal(r.body.code, 'validation_error');
  const got = r.body.errors.map((e: any) => [e.pointer, e.code]);
  t.same(got, [
    ['/items/0/value', 'field_value_invalid'],
    ['/items/1/item_id', 'item_duplicated'],
    ['/items/2/value', 'field_value_invalid'],
    ['/items/3/item_id', 'item_unknown'],
    ['/items/4/item_id', 'item_unknown'],
    ['/items/5/term_version_id', 'consent_term_version_stale'],
    ['/items', 'field_item_omitted'],
    ['/items', 'field_item_omitted'],
    ['/items', 'consent_item_omitted'],
  ]);
  t.match(r.body.errors[5].params, { current_term_version_id: v2 }, 'the stale error gives the current version');
  t.match(r.body.errors[0].params, { field_key: 'email', rule: 'format' });
  t.same(r.body.errors.slice(6).map((e: any) => e.params.item_id), [firstName, phone, smsItem]);

  const values = await submit(newsletter.id, {
    items: [
      { item_id: email, value: '  ' },
      { item_id: firstName, value: 'A name far longer than twenty characters' },
      { item_id: age, value: 130 },
      { item_id: phone, value: null },
      { item_id: newsItem, value: false, term_version_id: v2 },
      { item_id: smsItem, value: 'yes', term_version_id: smsV },
    ],
  });
  t.same(values.body.errors.map((e: any) => [e.pointer, e.code]), [
    ['/items/0/value', 'field_value_missing'],
    ['/items/1/value', 'field_value_invalid'],
    ['/items/2/value', 'field_value_invalid'],
    ['/items/4/value', 'consent_required'],
    ['/items/5/value', 'bool_parsing'],
  ]);
  t.equal((await pool.query('SELECT count(*)::int AS n FROM form_submissions')).rows[0].n, 0, 'nothing stored');
});

t.test('409 consent_identity_field_missing; 404 form_not_found for a missing or deactivated form', async (t) => {
  const body = annBody();
  body.items[5] = { item_id: smsItem, value: true, term_version_id: smsV };
  const r = await submit(newsletter.id, body);
  t.equal(r.status, 409);
  t.match(r.body, { code: 'consent_identity_field_missing', detail: /phone/ });
  body.items[3] = { item_id: phone, value: '+34 600 11 22 33' };
  await setTermActive(a.tenant, pool, sms.id, false);
  t.match((await submit(newsletter.id, body)).body, { status: 409, code: 'consent_term_inactive' });
  await setTermActive(a.tenant, pool, sms.id, true);
  const noValue = await submit(newsletter.id, { ...annBody({ ip_address: 'not-an-ip' }), items: annBody().items.map((i) => (i.item_id === age ? { item_id: age } : i)) });
  t.same(noValue.body.errors.map((e: any) => [e.pointer, e.code]), [['/items/2/value', 'missing'], ['/ip_address', 'value_error.ip_address']]);
  t.equal((await pool.query('SELECT count(*)::int AS n FROM form_submissions')).rows[0].n, 0, 'nothing stored');

  const missing = await submit(999999, annBody());
  t.equal(missing.status, 404);
  await setFormActive(a.tenant, pool, instant.id, false);
  const inactive = await submit(instant.id, { items: [] });
  t.equal(inactive.status, 404);
  t.same([missing.body.code, inactive.body.code], ['form_not_found', 'form_not_found'], 'the same answer for both');
  t.equal((await api.call('GET', '/v1/forms?is_active=false')).body.data[0].id, instant.id);
  await setFormActive(a.tenant, pool, instant.id, true);
});

let annId: number;

t.test('double confirmation: pending, one mail, the link followed and its page posted; then consents in force and the dataset fed', async (t) => {
  const first = await submit(newsletter.id, annBody({ ip_address: '203.0.113.9', user_agent: 'Site/1.0' }), 'ann-key-1');
  t.equal(first.status, 201);
  t.match(first.body, { id: Number, status: 'pending' });
  annId = first.body.id;
  const row = (await pool.query('SELECT source, status, host(ip_address) AS ip, user_agent, field_values FROM form_submissions WHERE id = $1', [annId])).rows[0];
  t.same(row, { source: 'form_api', status: 'pending', ip: '203.0.113.9', user_agent: 'Site/1.0', field_values: { email: 'ann@example.org', first_name: 'Ann' } });

  const events = await api.call('GET', '/v1/consent-events?contact=ann@example.org');
  t.match(events.body.data, [{ term_id: news.id, term_version_id: v2, status: 'pending', method: 'double_opt_in', source: 'form', submission_id: annId, form_id: newsletter.id, form_name: 'Newsletter' }]);
  t.equal(events.body.data.length, 1, 'one event: the unchecked consent records nothing');
  const resolve = () => api.call('GET', `/v1/consent-rules/resolve?contacts=ann@example.org&contact_types=email_address&channel=mail&purpose_ids=${N}`);
  t.equal((await resolve()).body.data[0].verdict, 'no_consent', 'pending authorizes nothing');

  // The retry: same key, same submission (from elsewhere): 200, the original body, nothing new.
  const retry = await submit(newsletter.id, annBody({ ip_address: '198.51.100.1' }), 'ann-key-1');
  t.equal(retry.status, 200);
  t.same(retry.body, first.body);
  const reused = await submit(newsletter.id, { ...annBody(), items: annBody().items.map((i) => (i.item_id === firstName ? { ...i, value: 'Anna' } : i)) }, 'ann-key-1');
  t.equal(reused.status, 422);
  t.equal(reused.body.code, 'idempotency_key_reused');
  t.equal((await pool.query('SELECT count(*)::int AS n FROM form_submissions')).rows[0].n, 1, 'one record');

  const mail = await waitFor('the confirmation mail', async () => {
    const { rows } = await pool.query("SELECT mail_id, to_email, sender FROM mails WHERE custom_msg_id = $1", [`form-confirmation:${annId}`]);
    return rows.length ? rows : undefined;
  });
  t.same(mail.map((m: any) => [m.to_email, m.sender]), [['ann@example.org', 'hello@forms.example']], 'to the email, from the form’s sender');
  t.equal((await api.waitFinal(mail[0].mail_id)).status, 3, 'sent through the normal pipeline');
  const stored = readMailbox(stack.mailboxDir).filter((m) => m.headers.some(([k, v]) => k === 'to' && v.includes('ann@example.org')));
  t.equal(stored.length, 1, 'exactly one mail in the mailbox for the submission and its retry');
  const parsed = await simpleParser(readFileSync(stored[0]!.file));
  t.equal(parsed.subject, 'Please confirm: Newsletter');
  const link = /https:\/\/forms\.cartero\.test\/fc\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(parsed.text ?? '');
  if (!t.ok(link, 'the confirmation link in the text part')) return;

  const page = await fetch(`${stack.url}/fc/${link![1]}`, { headers: { accept: 'text/html' } });
  t.equal(page.status, 200);
  const html = await page.text();
  t.match(html, '<form method="post"><button type="submit">Confirm</button></form>');
  t.match(html, 'Newsletter terms (version v2)');
  t.equal((await pool.query('SELECT status FROM form_submissions WHERE id = $1', [annId])).rows[0].status, 'pending', 'GET confirms nothing');

  const posted = await fetch(`${stack.url}/fc/${link![1]}`, {
    method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Browser/2' }, body: '',
  });
  t.equal(posted.status, 200);
  t.match(await posted.text(), '<h1>Thank you: confirmed</h1>');
  t.match((await pool.query('SELECT status, confirmation_user_agent AS ua FROM form_submissions WHERE id = $1', [annId])).rows[0], { status: 'confirmed', ua: 'Browser/2' });
  t.match((await api.call('GET', '/v1/consent-events?contact=ann@example.org')).body.data, [{ status: 'confirmed', confirmed_at: /^\d{4}-/ }]);
  t.equal((await resolve()).body.data[0].verdict, 'allowed', 'the resolver allows the contact');
  const record = await waitFor('the dataset record', async () => {
    const r = await api.call('GET', `/v1/datasets/${dataset.id}/records?identifier=ann@example.org`);
    return r.body.data?.[0];
  });
  t.same(record.values, { email: 'ann@example.org', first_name: 'Ann' }, 'the dataset has the confirmed answers (declared columns only)');
  const again = await fetch(`${stack.url}/fc/${link![1]}`, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
  t.match(await again.text(), '<h1>Already confirmed</h1>');
  const kinds = (await pool.query('SELECT kind, count(*)::int AS n FROM event_outbox WHERE kind LIKE $1 AND entity_id = $2 GROUP BY kind ORDER BY kind', ['form.%', annId])).rows;
  t.same(kinds, [{ kind: 'form.submission.confirmed', n: 1 }, { kind: 'form.submission.created', n: 1 }], 'outbox rows, once each');
  t.equal((await pool.query("SELECT count(*)::int AS n FROM mails WHERE custom_msg_id LIKE 'form-%:' || $1", [annId])).rows[0].n, 1, 'no auto-reply configured: one mail in all');
});

t.test('an update form updates an existing contact only', async (t) => {
  const update = await createForm(a.tenant, pool, {
    name: 'Profile update', kind: 'advanced', type: 'update', dataset_id: dataset.id,
    items: [{ type: 'field', field_key: 'email', required: true }, { type: 'field', field_key: 'first_name', required: false }],
  });
  const [u1, u2] = update.items.map((i) => i.id) as [number, number];
  const stranger = await submit(update.id, { items: [{ item_id: u1, value: 'stranger@example.org' }, { item_id: u2, value: 'Stray' }] });
  const ann = await submit(update.id, { items: [{ item_id: u1, value: 'ann@example.org' }, { item_id: u2, value: 'Annie' }] });
  t.same([stranger.status, ann.body.status], [201, 'confirmed']);
  const record = await waitFor('the update', async () => {
    const r = await api.call('GET', `/v1/datasets/${dataset.id}/records?identifier=ann@example.org`);
    return r.body.data?.[0]?.values.first_name === 'Annie' ? r.body.data[0] : undefined;
  });
  t.same(record.values, { email: 'ann@example.org', first_name: 'Annie' }, 'the existing contact updated');
  await waitFor('both feed jobs done', async () => {
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'form.dataset-feed' AND state = 'completed' AND (data->>'submission_id')::bigint = ANY ($1::bigint[])", [[stranger.body.id, ann.body.id]]);
    return rows[0].n === 2 ? true : undefined;
  });
  t.same((await api.call('GET', `/v1/datasets/${dataset.id}/records?identifier=stranger@example.org`)).body.data, [], 'no contact created for an unknown one');
});

t.test('20 concurrent submissions with one key: one record, one 201, the others 200 with its id', async (t) => {
  const body = { items: [{ item_id: instant.items[0]!.id, value: 'race@example.org' }, { item_id: instant.items[1]!.id, value: true, term_version_id: v2 }] };
  const answers = await Promise.all(Array.from({ length: 20 }, () => submit(instant.id, body, 'race-key')));
  t.same(answers.map((r) => r.status).sort(), [...Array(19).fill(200), 201], 'one 201, nineteen 200');
  const ids = new Set(answers.map((r) => r.body.id));
  t.equal(ids.size, 1, 'one id');
  t.match(answers[0]!.body, { status: 'confirmed' }, 'no confirmation needed: confirmed at once');
  t.equal((await pool.query("SELECT count(*)::int AS n FROM form_submissions WHERE idempotency_key = 'race-key'")).rows[0].n, 1, 'one record');
  t.equal((await pool.query('SELECT count(*)::int AS n FROM consent_events WHERE submission_id = $1', [[...ids][0]])).rows[0].n, 1, 'one consent event');
  t.equal((await api.call('GET', `/v1/consent-rules/resolve?contacts=race@example.org&contact_types=email_address&channel=mail&purpose_ids=${N}`)).body.data[0].verdict, 'allowed');
});

t.test('auto-reply and team notice of a confirmed submission; the plan quota counts every mail generated', async (t) => {
  const raceId = (await pool.query("SELECT id FROM form_submissions WHERE idempotency_key = 'race-key'")).rows[0].id;
  const mails = await waitFor('auto-reply and team notice', async () => {
    const { rows } = await pool.query('SELECT mail_id, to_email, custom_group_code FROM mails WHERE custom_msg_id IN ($1, $2) ORDER BY custom_group_code', [
      `form-auto-reply:${raceId}`, `form-team-notice:${raceId}`,
    ]);
    return rows.length === 2 ? rows : undefined;
  });
  t.same(mails.map((m: any) => [m.custom_group_code, m.to_email]), [['form_auto_reply', 'race@example.org'], ['form_team_notice', 'team@forms-team.test']]);
  for (const m of mails) t.equal((await api.waitFinal(m.mail_id)).status, 3);
  const reply = readMailbox(stack.mailboxDir).find((m) => m.mailId === mails[0].mail_id)!;
  t.equal((await simpleParser(readFileSync(reply.file))).subject, 'Thanks, race@example.org', 'merge tags of the answers');
  const notice = readMailbox(stack.mailboxDir).find((m) => m.mailId === mails[1].mail_id)!;
  t.match((await simpleParser(readFileSync(notice.file))).text, 'email: race@example.org');
  const sent = (await pool.query('SELECT count(*)::int AS n FROM mails WHERE instance_id = $1', [a.tenant.instanceId])).rows[0].n;
  t.equal(sent, 3, 'confirmation, auto-reply, team notice');
  const used = (await pool.query('SELECT used FROM quota_usage WHERE instance_id = $1', [a.tenant.instanceId])).rows[0]?.used;
  t.equal(used, 3, 'one quota unit per generated mail');
});

t.test('the jobs say why they did nothing: no dataset to feed, no sender allowed to send', async (t) => {
  const race = (await pool.query("SELECT id::int FROM form_submissions WHERE idempotency_key = 'race-key'")).rows[0].id as number;
  t.same(await feedDataset(a.tenant, pool, race), { outcome: 'skipped', reason: 'no_dataset' }, 'a form without a dataset feeds nothing');

  const [unverified] = await makeSenders(pool, a.tenant, { domain: 'unverified-forms.example', verified: false, senders: [{ email: 'hi', name: 'Hi' }] });
  const form = await createForm(a.tenant, pool, {
    name: 'Unverified sender', kind: 'consent', type: 'registration', auto_reply_sender_id: unverified!,
    auto_reply: { subject: 'Thanks', text: 'We got it.' },
    items: [{ type: 'field', field_key: 'email', required: true }, { type: 'consent', term_id: news.id, required: false }],
  });
  const r = await submit(form.id, { items: [{ item_id: form.items[0]!.id, value: 'nosender@example.org' }, { item_id: form.items[1]!.id, value: false, term_version_id: v2 }] });
  t.equal(r.status, 201, 'the submission itself is taken');
  const settings = { publicUrl: PUBLIC_URL, secret: 'not used by an auto-reply', confirmDays: 7, maxBodyBytes: 1_000_000 };
  const result = await sendSubmissionMail(a.tenant, pool, jobQueue(stack.dbs.databaseUrl), { submissionId: r.body.id, mail: 'auto_reply' }, settings);
  t.match(result, { outcome: 'no_sender', reason: /hi@unverified-forms\.example is not verified/ });
  t.equal((await pool.query('SELECT count(*)::int AS n FROM mails WHERE to_email = $1', ['nosender@example.org'])).rows[0].n, 0, 'no mail accepted');
});

t.test('the OpenAPI document declares the Idempotency-Key header with its bounds', async (t) => {
  const doc = await (await fetch(`${stack.url}/v1/openapi.json`)).json();
  const header = doc.paths['/v1/forms/{id}/submissions'].post.parameters.find((p: any) => p.in === 'header');
  t.match(header, { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY } });
  const tooLong = await submit(instant.id, { items: [] }, 'k'.repeat(MAX_IDEMPOTENCY_KEY + 1));
  t.same([tooLong.status, tooLong.body.errors[0].code], [422, 'value_error.idempotency_key'], 'a longer key is refused as the document says');
});

t.test('a retry answers the original 200 even after the form changed: a new term version, a field item removed, an item made required', async (t) => {
  const term = await createTerm(a.tenant, pool, { name: 'Retry terms', type: 'marketing', purposeIds: [N], channels: ['mail'] });
  await addTermVersion(a.tenant, pool, term.id, { version: '1', body: 'First wording.' });
  await setCurrentVersion(a.tenant, pool, term.id, '1');
  const shownVersion = (await pool.query('SELECT id FROM consent_term_versions WHERE term_id = $1', [term.id])).rows[0].id as number;
  const definition = {
    name: 'Retry after change', kind: 'advanced' as const, type: 'registration' as const, auto_reply_sender_id: senderId!,
    items: [
      { type: 'field' as const, field_key: 'email', required: true },
      { type: 'field' as const, field_key: 'first_name' },
      { type: 'field' as const, field_key: 'age' },
      { type: 'consent' as const, term_id: term.id },
    ],
  };
  const form = await createForm(a.tenant, pool, definition);
  const [emailItem, nameItem, ageItem, consentItem] = form.items.map((i) => i.id) as [number, number, number, number];
  const body = {
    items: [
      { item_id: emailItem, value: 'retry@example.org' },
      { item_id: nameItem, value: null },
      { item_id: ageItem, value: 41 },
      { item_id: consentItem, value: true, term_version_id: shownVersion },
    ],
  };
  const first = await submit(form.id, body, 'retry-after-change');
  t.equal(first.status, 201);

  // The form changes three ways, each of which refuses that body now.
  await addTermVersion(a.tenant, pool, term.id, { version: '2', body: 'New wording.' });
  await setCurrentVersion(a.tenant, pool, term.id, '2');
  await updateForm(a.tenant, pool, form.id, {
    ...definition,
    items: [
      { id: emailItem, type: 'field', field_key: 'email', required: true },
      { id: nameItem, type: 'field', field_key: 'first_name', required: true },
      { id: consentItem, type: 'consent', term_id: term.id },
    ],
  });
  const control = await submit(form.id, body, 'retry-after-change-new');
  t.equal(control.status, 422, 'control: the same body under a new key is refused now');
  t.same(
    control.body.errors.map((e: any) => e.code).sort(),
    ['consent_term_version_stale', 'field_value_missing', 'item_unknown'],
    'a new term version, an item made required, a field item removed',
  );

  const retry = await submit(form.id, { ...body, ip_address: '198.51.100.7' }, 'retry-after-change');
  t.equal(retry.status, 200, 'the retry is answered as the first call was');
  t.same(retry.body, first.body, 'the original body: same id and status');
  t.equal((await pool.query('SELECT count(*)::int AS n FROM form_submissions WHERE form_id = $1', [form.id])).rows[0].n, 1, 'nothing new recorded');
});
