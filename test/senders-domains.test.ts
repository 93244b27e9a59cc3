import t from 'tap';
import { compile } from '../domain/validation.js';
import { senderSchema } from '../api/schemas/senders.js';
import { domainSchema, domainStatusSchema, domainWithRecordsSchema } from '../api/schemas/domains.js';
import { collectionSchema } from '../api/schemas/common.js';
import { setDomainChecks } from '../domain/domains/domains.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

const dbs = await testDatabases(t, 'senders');
const { url } = await startTestWeb(t, dbs);
const a = await makeTenant(dbs.pool);
const b = await makeTenant(dbs.pool);

// Response shapes are checked against the very schemas the OpenAPI document publishes.
const senderPage = compile(collectionSchema(senderSchema), 'json');
const sender = compile(senderSchema, 'json');
const domainPage = compile(collectionSchema(domainSchema), 'json');
// The single read adds the DNS records to publish (docs/domains.md).
const domain = compile(domainWithRecordsSchema, 'json');
const domainStatus = compile(domainStatusSchema, 'json');

const [newsId, billingId] = await makeSenders(dbs.pool, a.tenant, {
  domain: 'verified.example',
  senders: [{ email: 'news', name: 'Newsletter' }, { email: 'billing', name: 'Billing Team' }],
});
const [draftId] = await makeSenders(dbs.pool, a.tenant, { domain: 'pending.example', verified: false, senders: [{ email: 'hello', name: 'Hello 100%_off' }] });
const [otherId] = await makeSenders(dbs.pool, b.tenant, { domain: 'other.example', senders: [{ email: 'news', name: 'Other news' }] });
// Every instance has its sandbox sender from its creation, first of all (docs/panel.md, The sandbox).
const sandboxId = (
  await dbs.pool.query<{ id: number }>('SELECT s.id::int FROM senders s JOIN domains d ON d.id = s.domain_id WHERE d.is_sandbox AND s.instance_id = $1', [
    a.tenant.instanceId,
  ])
).rows[0]!.id;
const sandboxDomain = `${a.tenant.slug}.sandbox.cartero.test`;

async function get(path: string, headers = a.headers) {
  const res = await fetch(url + path, { headers });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('GET /v1/senders lists the instance senders with the spec fields', async (t) => {
  const { status, body } = await get('/v1/senders');
  t.equal(status, 200);
  senderPage(body);
  t.same(body.data.map((s: any) => s.id), [sandboxId, newsId, billingId, draftId]);
  t.same(body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 4, total_pages: 1 });
  t.match(body.data[0], { name: 'Sandbox', email_address: `sandbox@${sandboxDomain}`, domain_is_verified: true, is_consent_required: false });
  const news = body.data[1];
  t.equal(news.email_address, 'news@verified.example');
  t.equal(news.domain_is_verified, true);
  t.equal(body.data[3].domain_is_verified, false);
});

t.test('filters: name and email partial case-insensitive, is_domain_verified', async (t) => {
  t.same((await get('/v1/senders?name=TEAM')).body.data.map((s: any) => s.id), [billingId]);
  t.same((await get('/v1/senders?email=VERIFIED.EX')).body.data.map((s: any) => s.id), [newsId, billingId]);
  t.same((await get('/v1/senders?is_domain_verified=true')).body.data.map((s: any) => s.id), [sandboxId, newsId, billingId]);
  t.same((await get('/v1/senders?is_domain_verified=false')).body.data.map((s: any) => s.id), [draftId]);
  // LIKE wildcards in the filter are literal characters, not patterns.
  t.same((await get('/v1/senders?name=100%25_')).body.data.map((s: any) => s.id), [draftId]);
  t.same((await get('/v1/senders?name=%25')).body.data.map((s: any) => s.id), [draftId]);
  t.same((await get('/v1/senders?name=_')).body.data.map((s: any) => s.id), [draftId]);
});

t.test('pagination has_more and totals across pages', async (t) => {
  const p1 = await get('/v1/senders?page_size=2');
  t.same(p1.body.data.map((s: any) => s.id), [sandboxId, newsId]);
  t.same(p1.body.pagination, { page: 1, page_size: 2, has_more: true, total_items: 4, total_pages: 2 });
  const p2 = await get('/v1/senders?page_size=2&page=2');
  t.same(p2.body.data.map((s: any) => s.id), [billingId, draftId]);
  t.same(p2.body.pagination, { page: 2, page_size: 2, has_more: false, total_items: 4, total_pages: 2 });
  // Past the end no row carries the window count: the total still comes (a separate count).
  const p3 = await get('/v1/senders?page_size=2&page=3');
  t.same(p3.body.data, []);
  t.same(p3.body.pagination, { page: 3, page_size: 2, has_more: false, total_items: 4, total_pages: 2 });
  const filtered = await get('/v1/senders?page_size=1&page=5&is_domain_verified=true');
  t.same(filtered.body.pagination, { page: 5, page_size: 1, has_more: false, total_items: 3, total_pages: 3 });
});

t.test('times are the API format, Postgres time to the millisecond', async (t) => {
  const { rows } = await dbs.pool.query<{ created: string }>(
    'SELECT floor(extract(epoch FROM created_at) * 1000)::bigint::text AS created FROM senders WHERE id = $1',
    [newsId],
  );
  for (const body of [(await get('/v1/senders')).body.data.find((s: any) => s.id === newsId), (await get(`/v1/senders/${newsId}`)).body]) {
    t.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    t.equal(new Date(body.created_at).getTime(), Number(rows[0]!.created));
    t.match(body.updated_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  }
});

t.test('domain_is_verified is recomputed at each query', async (t) => {
  await setDomainChecks(a.tenant, dbs.pool, 'verified.example', { dkim: 'failed' });
  t.equal((await get(`/v1/senders/${newsId}`)).body.domain_is_verified, false);
  t.equal((await get('/v1/domains/verified.example/status')).body.is_verified, false);
  await setDomainChecks(a.tenant, dbs.pool, 'verified.example', { dkim: 'approved' });
  const { status, body } = await get(`/v1/senders/${newsId}`);
  t.equal(status, 200);
  sender(body);
  t.equal(body.domain_is_verified, true);
});

t.test('a domain is verified only when all four checks are approved', async (t) => {
  for (const check of ['mx', 'spf', 'dkim', 'dmarc'] as const) {
    await setDomainChecks(a.tenant, dbs.pool, 'verified.example', { [check]: 'pending' });
    t.equal((await get('/v1/domains/verified.example/status')).body.is_verified, false, `${check} pending`);
    await setDomainChecks(a.tenant, dbs.pool, 'verified.example', { [check]: 'approved' });
  }
  const { status, body } = await get('/v1/domains/Verified.Example/status');
  t.equal(status, 200);
  domainStatus(body);
  t.same(Object.keys(body).sort(), ['domain', 'id', 'is_verified']);
  t.equal(body.is_verified, true);
});

t.test('domains listing and record', async (t) => {
  const list = await get('/v1/domains');
  t.equal(list.status, 200);
  domainPage(list.body);
  t.same(list.body.data.map((d: any) => d.domain), [sandboxDomain, 'verified.example', 'pending.example']);
  t.same(list.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 3, total_pages: 1 });
  t.same((await get('/v1/domains?page_size=1&page=3')).body.pagination, { page: 3, page_size: 1, has_more: false, total_items: 3, total_pages: 3 });
  const past = await get('/v1/domains?page_size=1&page=4');
  t.same(past.body.data, []);
  t.same(past.body.pagination, { page: 4, page_size: 1, has_more: false, total_items: 3, total_pages: 3 }, 'past the end: the total still comes');
  const rec = await get(`/v1/domains/${list.body.data[2].id}`);
  domain(rec.body);
  t.match(rec.body, { domain: 'pending.example', is_verified: false, mx_status: 'pending', spf_status: 'pending', dkim_status: 'pending', dmarc_status: 'pending' });
});

// Ids of another instance in the path (404, never data): test/route-security.test.ts.
t.test("another instance's senders are not listed", async (t) => {
  t.notOk((await get('/v1/senders')).body.data.some((s: any) => s.id === otherId));
});

t.test('a non-integer id is 422 int_parsing on the path parameter', async (t) => {
  const { status, body } = await get('/v1/senders/abc');
  t.equal(status, 422);
  t.same(body.errors, [{ pointer: '/id', code: 'int_parsing', message: 'Input should be a valid integer' }]);
});
