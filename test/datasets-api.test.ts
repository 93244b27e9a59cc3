import t, { type Test } from 'tap';
import { datasetDetailSchema, datasetSchema } from '../api/schemas/datasets.js';
import { compile } from '../domain/validation.js';
import { cliTest, failed } from './helpers/cli-test.js';
import { makeTenant } from './helpers/fixtures.js';
import { oneJsonObject, type CliResult } from './helpers/spawn.js';

/**
 * Datasets (issue 14): created and changed in the panel (`cartero dataset ...`, run as a user
 * runs it), read over HTTP with GET /v1/datasets and /v1/datasets/{id}.
 */

const { dbs, cli, binary, a, b, call, ok } = await cliTest(t, 'datasetsapi', ['dataset:read']);
const summary = compile(datasetSchema, 'json');
const detail = compile(datasetDetailSchema, 'json');

const get = async (path: string, headers = a.headers) => call('GET', path, undefined, headers);

function refused(t: Test, r: CliResult, code: string, what: string): void {
  failed(t, r, new RegExp(`: \\d{3} ${code}: `), what, 1);
}

await ok('field', 'create', '--instance', a.slug, '--key', 'first_name', '--name', 'First name', '--type', 'text');
await ok('field', 'create', '--instance', a.slug, '--key', 'member_code', '--name', 'Member code', '--type', 'text');
await ok('field', 'create', '--instance', a.slug, '--key', 'subscribed', '--name', 'Subscribed', '--type', 'boolean');

t.test('create: one channel decides the identifier; shown as GET /v1/datasets/{id} shows it', async (t) => {
  // Through `node bin/cartero.js` itself, once: the other commands of this file run in process (test/helpers/spawn.ts's cliRunner).
  const mail = oneJsonObject(await binary('dataset', 'create', '--instance', a.slug, '--name', 'Newsletter', '--channel', 'mail', '--columns', 'email:required,first_name',
    '--description', 'Monthly news'));
  detail(mail);
  t.match(mail, { name: 'Newsletter', channel: ['mail'], identity_field: 'email', is_active: true, description: 'Monthly news',
    columns: [{ field_key: 'email', required: true }, { field_key: 'first_name', required: false }] });
  const got = await get(`/v1/datasets/${mail.id}`);
  t.equal(got.status, 200);
  t.same(got.body, mail, 'GET shows what the command printed');
  const sms = await ok('dataset', 'create', '--instance', a.slug, '--name', 'Alerts', '--channel', 'sms', '--columns', 'phone');
  t.equal(sms.identity_field, 'phone', 'sms identifies by phone');
  const wsp = await ok('dataset', 'create', '--instance', a.slug, '--name', 'Chat', '--channel', 'wsp', '--columns', 'phone,first_name');
  t.equal(wsp.identity_field, 'phone', 'wsp identifies by phone');
  const multi = await ok('dataset', 'create', '--instance', a.slug, '--name', 'Members', '--channel', 'mail,sms', '--identity-field', 'member_code',
    '--columns', 'member_code:required,email,phone');
  t.match(multi, { channel: ['mail', 'sms'], identity_field: 'member_code' });
  const none = await ok('dataset', 'create', '--instance', a.slug, '--name', 'Offline', '--identity-field', 'member_code', '--columns', 'member_code');
  t.match(none, { channel: null, identity_field: 'member_code' });

  const list = await get('/v1/datasets');
  t.equal(list.status, 200);
  for (const item of list.body.data) summary(item);
  t.same(list.body.data.map((d: any) => d.name), ['Newsletter', 'Alerts', 'Chat', 'Members', 'Offline'], 'oldest first');
  t.notOk('columns' in list.body.data[0] || 'identity_field' in list.body.data[0], 'the listing omits identifier and columns');
  t.same(list.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 5, total_pages: 1 });
  const page2 = await get('/v1/datasets?page=2&page_size=2');
  t.same(page2.body.data.map((d: any) => d.name), ['Chat', 'Members']);
  t.equal(page2.body.pagination.has_more, true);
});

t.test('create refusals: every dataset_* code of a declaration', async (t) => {
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'NEWSLETTER', '--channel', 'mail', '--columns', 'email'), 'dataset_name_taken', 'a name differing in case');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'Two', '--channel', 'mail,sms', '--columns', 'email,phone'), 'dataset_identity_field_required', 'several channels, no identity field');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'Zero', '--columns', 'email'), 'dataset_identity_field_required', 'no channel, no identity field');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'Unknown', '--channel', 'mail', '--columns', 'email,shoe_size'), 'dataset_field_not_found', 'a column not in the catalog');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'UnknownId', '--channel', 'mail,sms', '--identity-field', 'shoe_size', '--columns', 'email'), 'dataset_field_not_found', 'an identity field not in the catalog');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'Dup', '--channel', 'mail', '--columns', 'email,first_name,first_name:required'), 'dataset_field_duplicated', 'a repeated column');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'NoId', '--channel', 'mail', '--columns', 'first_name'), 'dataset_identity_field_missing', 'columns without the identifier');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'NoId2', '--channel', 'sms,wsp', '--identity-field', 'member_code', '--columns', 'phone'), 'dataset_identity_field_missing', 'columns without the declared identifier');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'Conflict', '--channel', 'mail', '--identity-field', 'member_code', '--columns', 'email,member_code'), 'invalid_identity_field', 'one channel with another identity field');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'Bool', '--identity-field', 'subscribed', '--columns', 'subscribed'), 'invalid_identity_field', 'a boolean cannot identify');
  await ok('field', 'create', '--instance', a.slug, '--key', 'old_code', '--name', 'Old code', '--type', 'text');
  await ok('field', 'deactivate', '--instance', a.slug, '--key', 'old_code');
  refused(t, await cli('dataset', 'create', '--instance', a.slug, '--name', 'Inactive', '--channel', 'mail', '--columns', 'email,old_code'), 'dataset_field_not_found', 'a deactivated field');
  const bad = await cli('dataset', 'create', '--instance', a.slug, '--name', 'Bad', '--channel', 'fax', '--columns', 'email');
  t.equal(bad.code, 2, 'an unknown channel is a usage mistake');
  const badColumns = await cli('dataset', 'create', '--instance', a.slug, '--name', 'Bad', '--channel', 'mail', '--columns', 'email:mandatory');
  t.equal(badColumns.code, 2, 'a column mark other than required is a usage mistake');
  const { rows } = await dbs.pool.query(`SELECT count(*)::int AS n FROM datasets WHERE instance_id = $1`, [a.tenant.instanceId]);
  t.equal(rows[0].n, 5, 'nothing stored by a refusal');
  t.equal((await ok('dataset', 'create', '--instance', b.slug, '--name', 'Newsletter', '--channel', 'mail', '--columns', 'email')).name, 'Newsletter',
    'another instance may use the name');
});

// Another instance's id over HTTP (404, no data) and the scopes: test/route-security.test.ts.
t.test('404 dataset_not_found; each instance lists its own; the CLI refuses another instance\'s', async (t) => {
  const theirs = (await get('/v1/datasets', b.headers)).body.data[0];
  t.match((await get('/v1/datasets/999999')).body, { code: 'dataset_not_found', detail: 'dataset 999999 not found' });
  t.same((await get('/v1/datasets', b.headers)).body.data.map((d: any) => d.name), ['Newsletter'], 'each instance lists its own');
  refused(t, await cli('dataset', 'update', '--instance', a.slug, '--id', String(theirs.id), '--name', 'Mine'), 'dataset_not_found', "updating another instance's dataset");
});

t.test('update and deactivate', async (t) => {
  const made = await ok('dataset', 'create', '--instance', a.slug, '--name', 'Leads', '--channel', 'mail', '--columns', 'email');
  const renamed = await ok('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--name', 'Hot leads', '--description', 'From the fair');
  t.match(renamed, { name: 'Hot leads', description: 'From the fair', identity_field: 'email' });
  t.same(renamed.columns, made.columns, 'columns untouched');
  const cols = await ok('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--columns', 'email:required,first_name,member_code', '--description', '');
  t.same(cols.columns, [{ field_key: 'email', required: true }, { field_key: 'first_name', required: false }, { field_key: 'member_code', required: false }]);
  t.equal(cols.description, null, "'' empties the description");
  t.equal(cols.name, 'Hot leads');
  const multi = await ok('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--channel', 'mail,sms', '--identity-field', 'member_code');
  t.match(multi, { channel: ['mail', 'sms'], identity_field: 'member_code' });
  refused(t, await cli('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--columns', 'email,first_name'), 'dataset_identity_field_missing', 'dropping the identity column');
  refused(t, await cli('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--channel', 'none', '--identity-field', 'nope'), 'dataset_field_not_found', 'an unknown identity field');
  refused(t, await cli('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--name', 'alerts'), 'dataset_name_taken', 'renaming onto a taken name');
  const back = await ok('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--channel', 'mail');
  t.match(back, { channel: ['mail'], identity_field: 'email' }, 'one channel again: the channel decides');
  t.ok(Date.parse(back.updated_at) >= Date.parse(made.updated_at));

  await ok('field', 'create', '--instance', a.slug, '--key', 'legacy', '--name', 'Legacy', '--type', 'text');
  await ok('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--columns', 'email,legacy');
  await ok('field', 'deactivate', '--instance', a.slug, '--key', 'legacy');
  const kept = await ok('dataset', 'update', '--instance', a.slug, '--id', String(made.id), '--columns', 'email:required,legacy');
  t.same(kept.columns.map((c: any) => c.field_key), ['email', 'legacy'], 'a deactivated field already declared stays declarable');
  refused(t, await cli('field', 'delete', '--instance', a.slug, '--key', 'legacy'), 'field_in_use', 'a declared field cannot be deleted');

  const off = await ok('dataset', 'deactivate', '--instance', a.slug, '--id', String(made.id));
  t.equal(off.is_active, false);
  t.equal((await get(`/v1/datasets/${made.id}`)).body.is_active, false);
  t.equal((await ok('dataset', 'activate', '--instance', a.slug, '--id', String(made.id))).is_active, true);
});
