import t from 'tap';
import { recordSchema } from '../api/schemas/datasets.js';
import { compile } from '../domain/validation.js';
import { addContacts } from '../domain/datasets/contacts.js';
import { createDataset } from '../domain/datasets/datasets.js';
import { listRecords, RECORD_SEARCH_SQL, SEARCH_TOO_LONG } from '../domain/datasets/records.js';
import { createField } from '../domain/fields/catalog.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

/**
 * GET /v1/datasets/{id}/records (issue 14): the listing and its three searches over HTTP, the
 * indexes each search uses on a dataset of 100,000 contacts, and the 503 "narrow it" a search
 * past its statement timeout answers.
 */

const dbs = await testDatabases(t, 'datasetsrecords');
const { url } = await startTestWeb(t, dbs);
const a = await makeTenant(dbs.pool, { scopes: ['dataset:read'] });
const record = compile(recordSchema, 'json');

await createField(a.tenant, dbs.pool, { key: 'first_name', name: 'First name', type: 'text' });
await createField(a.tenant, dbs.pool, { key: 'age', name: 'Age', type: 'number' });
await createField(a.tenant, dbs.pool, { key: 'vip', name: 'VIP', type: 'boolean' });
await createField(a.tenant, dbs.pool, { key: 'city', name: 'City', type: 'text' });
await createField(a.tenant, dbs.pool, { key: 'notes', name: 'Notes', type: 'text' });
const columns = [{ key: 'email', required: true }, { key: 'first_name', required: false }, { key: 'age', required: false },
  { key: 'vip', required: false }, { key: 'city', required: false }];
const small = await createDataset(a.tenant, dbs.pool, { name: 'Small', channel: ['mail'], columns });
// One batch: its contacts are numbered in identifier order (the upsert's lock order), so listed so.
const people = ['a_b', 'ann', 'anna', 'annabel', 'axb', 'bob', 'carla'];
const added = await addContacts(a.tenant, dbs.pool, small.id, [...people].reverse().map((name) => {
  const i = people.indexOf(name);
  return { values: { email: `${name}@example.com`, first_name: name, age: 20 + i, vip: i % 2 === 0, city: i < 3 ? 'Madrid' : 'Bilbao' } };
}));
if (added.created !== people.length) throw new Error(`fixture: ${JSON.stringify(added)}`);

// 100,000 contacts straight into the table (the import has its own tests): the searches' plans.
const big = await createDataset(a.tenant, dbs.pool, { name: 'Big', channel: ['mail'], columns });
await dbs.pool.query(
  `INSERT INTO dataset_records (instance_id, dataset_id, identifier, values)
   SELECT $1, $2, 'user' || i || '@example.com',
          jsonb_build_object('email', 'user' || i || '@example.com', 'age', i % 90, 'city', CASE WHEN i % 1000 = 0 THEN 'Soria' ELSE 'Madrid' END)
     FROM generate_series(1, 100000) AS i`,
  [a.tenant.instanceId, big.id],
);
await dbs.pool.query('ANALYZE dataset_records');

async function get(path: string, headers = a.headers) {
  const res = await fetch(url + path, { headers });
  return { status: res.status, body: (await res.json()) as any };
}
const records = (id: number, query: string) => get(`/v1/datasets/${id}/records?${query}`);
const emails = (body: any) => body.data.map((r: any) => r.identifier);

t.test('the listing: oldest first, has_more, total_items null', async (t) => {
  const page = await records(small.id, 'page_size=3');
  t.equal(page.status, 200);
  for (const r of page.body.data) record(r);
  t.same(emails(page.body), ['a_b@example.com', 'ann@example.com', 'anna@example.com'], 'a batch in identifier order, whatever its own');
  t.same(page.body.pagination, { page: 1, page_size: 3, has_more: true, total_items: null, total_pages: null });
  const last = await records(small.id, 'page=3&page_size=3');
  t.same(emails(last.body), ['carla@example.com']);
  t.equal(last.body.pagination.has_more, false);
  t.same(page.body.data[1].values, { email: 'ann@example.com', first_name: 'ann', age: 21, vip: false, city: 'Madrid' });
});

t.test('searches: exact identifier, prefix, column=value, together', async (t) => {
  t.same(emails((await records(small.id, 'identifier=ANN@Example.com')).body), ['ann@example.com'], 'exact, in the stored form');
  t.same(emails((await records(small.id, 'identifier=ann')).body), [], 'exact is exact');
  t.same(emails((await records(small.id, 'identifier=Ann&identifier_operator=starts_with')).body),
    ['ann@example.com', 'anna@example.com', 'annabel@example.com'], 'prefix');
  t.same(emails((await records(small.id, 'identifier=a_&identifier_operator=starts_with')).body), ['a_b@example.com'], 'a LIKE wildcard is a plain character');
  t.same(emails((await records(small.id, 'column=city&value=Bilbao')).body), ['annabel@example.com', 'axb@example.com', 'bob@example.com', 'carla@example.com']);
  t.same(emails((await records(small.id, 'column=age&value=21')).body), ['ann@example.com'], 'a number column: the text read as a number');
  t.same(emails((await records(small.id, 'column=vip&value=true&identifier=ann&identifier_operator=starts_with')).body), ['anna@example.com'], 'combined');
  t.same(emails((await records(small.id, 'column=city&value=madrid')).body), [], 'a column value is exact');
  t.same(emails((await records(small.id, 'column=email&value=BOB@example.com')).body), ['bob@example.com'], 'the identity column read as its field');
});

// Another instance's dataset (404, no data) and the scope: test/route-security.test.ts.
t.test('search refusals', async (t) => {
  t.match(await records(small.id, 'column=notes&value=x'), { status: 409, body: { code: 'dataset_column_not_declared' } }, 'a catalog field not declared');
  t.match(await records(small.id, 'column=shoe&value=42'), { status: 409, body: { code: 'dataset_column_not_declared' } });
  t.match(await records(small.id, 'column=city'), { status: 422, body: { errors: [{ pointer: '/value', code: 'missing' }] } });
  t.match(await records(small.id, 'value=x'), { status: 422, body: { errors: [{ pointer: '/column', code: 'missing' }] } });
  t.match(await records(small.id, 'column=age&value=old'), { status: 422, body: { errors: [{ pointer: '/value', code: 'field_value_invalid', params: { rule: 'type' } }] } });
  t.match(await records(small.id, 'identifier=x&identifier_operator=near'), { status: 422, body: { errors: [{ pointer: '/identifier_operator', code: 'enum' }] } });
  t.match(await records(small.id, '', ), { status: 200 });
});

t.test('each search shape is answered from an index', async (t) => {
  const plan = async (params: unknown[]) =>
    (await dbs.pool.query(`EXPLAIN ${RECORD_SEARCH_SQL}`, [big.id, ...params, 21, 0])).rows.map((r) => r['QUERY PLAN']).join('\n');
  t.match(await plan(['user5@example.com', null, null]), /Index Scan using dataset_records_dataset_id_identifier_key/, 'exact identifier: the unique btree');
  t.match(await plan([null, 'user12%', null]), /Index Cond: .*identifier >= 'user12'.*identifier < 'user13'/, 'prefix: a range of the C-collated btree');
  t.match(await plan([null, null, '{"city": "Soria"}']), /Bitmap Index Scan on dataset_records_values/, 'column=value: the GIN index');
  const res = await records(big.id, 'column=city&value=Soria&page=2&page_size=50');
  t.equal(res.body.data.length, 50);
  t.equal(res.body.data[0].values.city, 'Soria');
  t.equal(res.body.pagination.has_more, false, '100 Soria contacts: two pages of 50');
});

t.test('a search past its statement timeout answers 503 asking to narrow it', async (t) => {
  const slow = listRecords(a.tenant, dbs.pool, big.id, { page: 4000, page_size: 20, column: 'city', value: 'Madrid' }, { timeoutMs: 1 });
  await t.rejects(slow, { status: 503, code: 'service_unavailable', message: SEARCH_TOO_LONG });
  const fine = await listRecords(a.tenant, dbs.pool, big.id, { page: 1, page_size: 20, identifier: 'user77@example.com' });
  t.equal(fine.data.length, 1, 'the connection and the timeout were the search transaction’s only');
  const { rows } = await dbs.pool.query('SHOW statement_timeout');
  t.equal(rows[0].statement_timeout, '0', 'SET LOCAL: nothing leaks into the pool');
});
