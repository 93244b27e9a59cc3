import t from 'tap';
import { contactBatchSchema, recordSchema } from '../api/schemas/datasets.js';
import { compile } from '../domain/validation.js';
import { createDataset, setDatasetActive, updateDataset } from '../domain/datasets/datasets.js';
import { createField } from '../domain/fields/catalog.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

/**
 * POST /v1/datasets/{id}/contacts (issue 14) over HTTP: one contact and batches, the upsert by
 * the dataset's identifier, every refusal code, and a batch answering each contact as it alone
 * would have been answered.
 */

const dbs = await testDatabases(t, 'datasetscontacts');
const { url } = await startTestWeb(t, dbs);
const a = await makeTenant(dbs.pool, { scopes: ['dataset:read', 'dataset:write'] });
const record = compile(recordSchema, 'json');
const batch = compile(contactBatchSchema, 'json');

async function catalog(tenant: Tenant) {
  await createField(tenant, dbs.pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 10 });
  await createField(tenant, dbs.pool, { key: 'member_code', name: 'Member code', type: 'text', pattern: '[A-Z]{2}-[0-9]{4}' });
  await createField(tenant, dbs.pool, { key: 'age', name: 'Age', type: 'number', min: 0, max: 130 });
  await createField(tenant, dbs.pool, { key: 'birthday', name: 'Birthday', type: 'date' });
  await createField(tenant, dbs.pool, { key: 'vip', name: 'VIP', type: 'boolean' });
  await createField(tenant, dbs.pool, { key: 'plan', name: 'Plan', type: 'select', options: ['free', 'pro'] });
  await createField(tenant, dbs.pool, { key: 'notes', name: 'Notes', type: 'text' });
}
await catalog(a.tenant);

const COLUMNS = [
  { key: 'email', required: true },
  { key: 'first_name', required: true },
  { key: 'member_code', required: false },
  { key: 'age', required: false },
  { key: 'birthday', required: false },
  { key: 'vip', required: false },
  { key: 'plan', required: false },
  { key: 'phone', required: false },
];
const mailDataset = (name: string) => createDataset(a.tenant, dbs.pool, { name, channel: ['mail'], columns: COLUMNS });
const news = await mailDataset('News');

async function post(datasetId: number, body: unknown, headers = a.headers) {
  const res = await fetch(`${url}/v1/datasets/${datasetId}/contacts`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('one contact: 201 new, 200 updated, merged by the identifier, a retry changes nothing', async (t) => {
  const created = await post(news.id, { values: { email: ' Ann@Example.COM ', first_name: 'Ann', age: '42', vip: 'TRUE', plan: 'pro', birthday: '1990-02-28' } });
  t.equal(created.status, 201);
  record(created.body);
  t.match(created.body, { dataset_id: news.id, identifier: 'ann@example.com' });
  t.same(created.body.values, { email: 'ann@example.com', first_name: 'Ann', age: 42, vip: true, plan: 'pro', birthday: '1990-02-28' }, 'typed, email lower-cased');

  const again = await post(news.id, { values: { email: 'ann@example.com', first_name: 'Ann', age: 42 } });
  t.equal(again.status, 200, 'the same identifier: an update');
  t.same(again.body, created.body, 'values all stored already: nothing rewritten, updated_at kept');

  const changed = await post(news.id, { values: { email: 'ANN@example.com', first_name: 'Annie', age: null, notes: undefined, plan: '  ' } });
  t.equal(changed.status, 200);
  t.equal(changed.body.id, created.body.id);
  t.same(changed.body.values, { ...created.body.values, first_name: 'Annie' }, 'a column given replaces; empty values erase nothing');
  t.ok(changed.body.updated_at > created.body.updated_at, 'updated_at moves when values change');
  t.equal(changed.body.created_at, created.body.created_at);
  const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM dataset_records WHERE dataset_id = $1', [news.id]);
  t.equal(rows[0].n, 1, 'one record');
});

t.test('409 refusals of one contact, in the order a reader fixes them', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['a catalog field the dataset does not declare', { email: 'x@example.com', first_name: 'X', notes: 'hi' }, 'dataset_column_not_declared'],
    ['a key outside the catalog', { email: 'x@example.com', first_name: 'X', shoe: 42 }, 'dataset_column_not_declared'],
    ['undeclared beats a missing identifier', { first_name: 'X', notes: 'hi' }, 'dataset_column_not_declared'],
    ['no identifier', { first_name: 'X' }, 'dataset_identity_value_missing'],
    ['an empty identifier', { email: '  ', first_name: 'X' }, 'dataset_identity_value_missing'],
    ['a null identifier', { email: null, first_name: 'X' }, 'dataset_identity_value_missing'],
    ['a missing identifier beats a missing required column', { age: 3 }, 'dataset_identity_value_missing'],
    ['a required column missing', { email: 'x@example.com' }, 'dataset_required_column_missing'],
    ['a required column empty', { email: 'x@example.com', first_name: '' }, 'dataset_required_column_missing'],
  ];
  for (const [what, values, code] of cases) {
    const res = await post(news.id, { values });
    t.equal(res.status, 409, `${what}: 409`);
    t.equal(res.body.code, code, `${what}: ${code}`);
  }
  const missing = await post(news.id, { values: { email: 'x@example.com' } });
  t.match(missing.body.detail, /first_name/, 'names the column');
});

t.test('422 field_value_invalid at /values/<field_key>, params naming the rule', async (t) => {
  const base = { email: 'bob@example.com', first_name: 'Bob' };
  const cases: Array<[Record<string, unknown>, string, Record<string, unknown>]> = [
    [{ first_name: 'Bartholomew' }, 'first_name', { rule: 'max_length', max_length: 10 }],
    [{ first_name: 42 }, 'first_name', { rule: 'type', type: 'text' }],
    [{ member_code: 'ab-1234' }, 'member_code', { rule: 'pattern', pattern: '[A-Z]{2}-[0-9]{4}' }],
    [{ member_code: 'AB-1234x' }, 'member_code', { rule: 'pattern' }],
    [{ email: 'not-an-address' }, 'email', { rule: 'format', format: 'email' }],
    [{ phone: '12' }, 'phone', { rule: 'format', format: 'e164' }],
    [{ age: 'forty' }, 'age', { rule: 'type', type: 'number' }],
    [{ age: -1 }, 'age', { rule: 'min', min: 0 }],
    [{ age: '131' }, 'age', { rule: 'max', max: 130 }],
    [{ birthday: '2023-02-29' }, 'birthday', { rule: 'format', format: 'date' }],
    [{ birthday: '28/02/1990' }, 'birthday', { rule: 'format', format: 'date' }],
    [{ vip: 'maybe' }, 'vip', { rule: 'type', type: 'boolean' }],
    [{ vip: 1 }, 'vip', { rule: 'type', type: 'boolean' }],
    [{ plan: 'team' }, 'plan', { rule: 'options', options: 'free, pro' }],
    [{ plan: ['free'] }, 'plan', { rule: 'type', type: 'select' }],
  ];
  for (const [values, key, params] of cases) {
    const res = await post(news.id, { values: { ...base, ...values } });
    t.equal(res.status, 422, `${JSON.stringify(values)}: 422`);
    t.equal(res.body.code, 'validation_error');
    t.match(res.body.errors, [{ pointer: `/values/${key}`, code: 'field_value_invalid', params }], `${JSON.stringify(values)}: ${params.rule}`);
  }
  const two = await post(news.id, { values: { ...base, age: 'x', plan: 'y' } });
  t.same(two.body.errors.map((e: any) => e.pointer), ['/values/age', '/values/plan'], 'every invalid value listed');
  const invalidId = await post(news.id, { values: { email: 'nope', first_name: 'X' } });
  t.equal(invalidId.status, 422, 'an identifier given but invalid is a 422 about it, not a missing one');
  const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM dataset_records WHERE dataset_id = $1', [news.id]);
  t.equal(rows[0].n, 1, 'nothing stored by a refusal');
});

t.test('sms identifies by phone in E.164; a declared identity field upserts by its value', async (t) => {
  const sms = await createDataset(a.tenant, dbs.pool, { name: 'SMS', channel: ['sms'], columns: [{ key: 'phone', required: true }, { key: 'first_name', required: false }] });
  const one = await post(sms.id, { values: { phone: '+34 600 11-22-33', first_name: 'Eva' } });
  t.equal(one.status, 201);
  t.equal(one.body.identifier, '+34600112233');
  const two = await post(sms.id, { values: { phone: '0034600112233', first_name: 'Eve' } });
  t.equal(two.status, 200, '00 read as +: the same contact');
  t.equal(two.body.values.first_name, 'Eve');
  const members = await createDataset(a.tenant, dbs.pool, {
    name: 'Members', channel: ['mail', 'sms'], identityField: 'member_code',
    columns: [{ key: 'member_code', required: true }, { key: 'email', required: false }],
  });
  t.equal((await post(members.id, { values: { member_code: 'AB-0001', email: 'm@example.com' } })).status, 201);
  const same = await post(members.id, { values: { member_code: 'AB-0001', email: 'other@example.com' } });
  t.equal(same.status, 200);
  t.same(same.body.values, { member_code: 'AB-0001', email: 'other@example.com' });
  t.equal((await post(members.id, { values: { email: 'm@example.com' } })).body.code, 'dataset_identity_value_missing', 'the email is not its identifier');
  const locked = updateDataset(a.tenant, dbs.pool, members.id, { channel: ['mail'] });
  await t.rejects(locked, { code: 'dataset_identity_field_locked' }, 'the identity field cannot change once contacts exist');
});

t.test('a batch: each contact answered as it alone would be; a bad one blocks nothing', async (t) => {
  const contacts = [
    { values: { email: 'c1@example.com', first_name: 'One' } },
    { values: { email: 'c2@example.com' } },
    { values: { email: 'c3@example.com', first_name: 'Three', age: 'old' } },
    { values: { email: 'C1@example.com', first_name: 'Uno', age: 1 } },
    { values: { first_name: 'Nobody' } },
    { values: { email: 'c4@example.com', first_name: 'Four', notes: 'x' } },
    { nothing: true },
    'not an object',
    { values: { email: 'ann@example.com', first_name: 'Annie' } },
    { values: { email: 'c5@example.com', first_name: 'Five', vip: false } },
  ];
  const batchTarget = await mailDataset('Batch');
  const res = await post(batchTarget.id, { contacts });
  t.equal(res.status, 200);
  batch(res.body);
  t.same(res.body.results.map((r: any) => [r.index, r.status, r.code ?? null]), [
    [0, 201, null], [1, 409, 'dataset_required_column_missing'], [2, 422, 'validation_error'], [3, 200, null],
    [4, 409, 'dataset_identity_value_missing'], [5, 409, 'dataset_column_not_declared'], [6, 422, 'validation_error'],
    [7, 422, 'validation_error'], [8, 201, null], [9, 201, null],
  ]);
  t.match(res.body.results[2].errors, [{ pointer: '/contacts/2/values/age', code: 'field_value_invalid', params: { rule: 'type' } }]);
  t.match(res.body.results[6].errors, [{ pointer: '/contacts/6/values', code: 'missing' }]);
  t.match(res.body.results[7].errors, [{ pointer: '/contacts/7/values', code: 'object_type' }]);
  t.same(res.body.results[0].record.values, { email: 'c1@example.com', first_name: 'Uno', age: 1 }, 'a repeated identifier is merged in order');
  t.same(res.body.results[3].record, res.body.results[0].record, 'both show the record as the batch left it');
  t.match(res.body, { created: 3, updated: 1, rejected: 6 });

  // The same contacts one by one, into a twin dataset: the same status and code each.
  const alone = await mailDataset('Alone');
  for (const [i, contact] of contacts.entries()) {
    // A batch item is the body of a single call; a non-object item is a non-object values.
    const body = typeof contact === 'object' ? contact : { values: contact };
    const one = await post(alone.id, body);
    const expected = res.body.results[i];
    t.equal(one.status, expected.status, `contact ${i}: status ${expected.status} alone too`);
    if (expected.status === 409) t.equal(one.body.code, expected.code, `contact ${i}: ${expected.code} alone too`);
    if (expected.status === 422 && i === 2) t.same(one.body.errors.map((e: any) => e.pointer), ['/values/age'], 'pointer without the batch prefix');
  }
  const again = await post(batchTarget.id, { contacts });
  t.same(again.body.results.map((r: any) => r.status), [200, 409, 422, 200, 409, 409, 422, 422, 200, 200], 'the same batch again: updates, nothing new');
  t.same(again.body.results[9].record, res.body.results[9].record, 'idempotent: the stored records are unchanged');
});

t.test('batch limits and body shapes', async (t) => {
  const big = Array.from({ length: 1000 }, (_, i) => ({ values: { email: `bulk${i}@example.com`, first_name: `N${i}` } }));
  const target = await mailDataset('Bulk');
  const full = await post(target.id, { contacts: big });
  t.equal(full.status, 200);
  t.equal(full.body.created, 1000, '1,000 contacts in one call');
  const over = await post(target.id, { contacts: [...big, big[0]] });
  t.equal(over.status, 422);
  t.match(over.body.errors, [{ pointer: '/contacts', code: 'too_long' }]);
  const both = await post(target.id, { values: { email: 'x@example.com', first_name: 'X' }, contacts: [big[0]] });
  t.match(both, { status: 422, body: { errors: [{ pointer: '', code: 'value_error' }] } });
  t.match(await post(target.id, {}), { status: 422, body: { errors: [{ pointer: '/values', code: 'missing' }] } });
  t.match(await post(target.id, { values: 'x' }), { status: 422, body: { errors: [{ pointer: '/values', code: 'object_type' }] } });
  t.match(await post(target.id, { contacts: [] }), { status: 422, body: { errors: [{ pointer: '/contacts', code: 'too_short' }] } });
});

// Another instance's dataset (404, no data) and the scope: test/route-security.test.ts.
t.test('an inactive dataset still receives contacts; an unknown one is 404', async (t) => {
  const quiet = await mailDataset('Quiet');
  await setDatasetActive(a.tenant, dbs.pool, quiet.id, false);
  t.equal((await post(quiet.id, { values: { email: 'q@example.com', first_name: 'Q' } })).status, 201);
  t.match(await post(999999, { values: {} }), { status: 404, body: { code: 'dataset_not_found' } });
});
