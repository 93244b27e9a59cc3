import t, { type Test } from 'tap';
import { fieldSchema } from '../api/schemas/fields.js';
import { compile } from '../domain/validation.js';
import { createInstance } from '../domain/tenancy/instances.js';
import { migratePostgres } from '../sql/migrate.js';
import { emptyTestDatabase } from './helpers/databases.js';
import { cliTest, failed } from './helpers/cli-test.js';
import { makeTenant } from './helpers/fixtures.js';
import { oneJsonObject, type CliResult } from './helpers/spawn.js';

/**
 * The field catalog (issue 14): GET /v1/fields over HTTP, and the panel-only commands that
 * change it run as a user runs them (`node bin/cartero.js field ...`) against this file's database.
 */

const { dbs, cli, binary, a, b, call, ok } = await cliTest(t, 'fieldscatalog', ['dataset:read']);
const field = compile(fieldSchema, 'json');

const get = async (path: string, headers = a.headers) => call('GET', path, undefined, headers);

/** A refused command: exit 1, nothing on stdout, the spec code on stderr. */
function refused(t: Test, r: CliResult, code: string, what: string): void {
  failed(t, r, new RegExp(`: \\d{3} ${code}: `), what, 1);
}

t.test('a new instance has the system fields email and phone, listed as the spec says', async (t) => {
  const res = await get('/v1/fields');
  t.equal(res.status, 200);
  for (const item of res.body.data) field(item);
  t.match(res.body.data, [
    { field_key: 'email', type: 'email', is_system: true, is_active: true, options: null, rules: { max_length: null, pattern: null, min: null, max: null } },
    { field_key: 'phone', type: 'phone', is_system: true, is_active: true },
  ]);
  t.same(res.body.pagination, { page: 1, page_size: 20, has_more: false, total_items: 2, total_pages: 1 });
  // The scope (dataset:read): test/route-security.test.ts.
});

t.test('an instance created before the migration gets the system fields from it', async (t) => {
  const old = await emptyTestDatabase(t, 'fieldsupgrade');
  await migratePostgres(old.pool, { through: '013' });
  const before = await createInstance(old.pool, { slug: 'older' });
  await migratePostgres(old.pool);
  const after = await createInstance(old.pool, { slug: 'newer' });
  const { rows } = await old.pool.query('SELECT instance_id, field_key, is_system FROM fields ORDER BY instance_id, id');
  t.same(
    rows.map((r) => [Number(r.instance_id), r.field_key, r.is_system]),
    [[before.id, 'email', true], [before.id, 'phone', true], [after.id, 'email', true], [after.id, 'phone', true]],
  );
});

t.test('field create: every type and rule, printed as GET /v1/fields shows it', async (t) => {
  // Through `node bin/cartero.js` itself, once: the other commands of this file run in process (test/helpers/spawn.ts's cliRunner).
  const code = oneJsonObject(await binary('field', 'create', '--instance', a.slug, '--key', 'member_code', '--name', 'Member code', '--type', 'text',
    '--max-length', '12', '--pattern', '[A-Z]{2}-[0-9]{4}'));
  field(code);
  t.match(code, { field_key: 'member_code', type: 'text', is_system: false, rules: { max_length: 12, pattern: '[A-Z]{2}-[0-9]{4}', min: null, max: null } });
  const age = await ok('field', 'create', '--instance', a.slug, '--key', 'age', '--name', 'Age', '--type', 'number', '--min', '0', '--max', '130.5');
  t.match(age.rules, { min: 0, max: 130.5 });
  const plan = await ok('field', 'create', '--instance', a.slug, '--key', 'plan', '--name', 'Plan', '--type', 'select', '--options', 'free,pro,team');
  t.same(plan.options, ['free', 'pro', 'team']);
  for (const type of ['email', 'phone', 'date', 'boolean']) {
    const made = await ok('field', 'create', '--instance', a.slug, '--key', `extra_${type}`, '--name', `Extra ${type}`, '--type', type);
    t.equal(made.type, type);
  }
  const listed = await get('/v1/fields?page_size=100');
  t.same(listed.body.data.find((f: any) => f.id === code.id), code, 'what GET shows');
  t.equal(listed.body.pagination.total_items, 9);
  t.same((await get('/v1/fields', b.headers)).body.data.map((f: any) => f.field_key), ['email', 'phone'], "another instance's catalog is its own");
});

t.test('field create refusals', async (t) => {
  await ok('field', 'create', '--instance', a.slug, '--key', 'city', '--name', 'Población', '--type', 'text');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'city', '--name', 'Town', '--type', 'text'), 'field_key_already_exists', 'a taken key');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'email', '--name', 'Mail', '--type', 'email'), 'field_key_already_exists', "a system field's key");
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'town', '--name', 'POBLACION', '--type', 'text'), 'field_name_taken', 'a name differing in case and accents');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'mail2', '--name', 'EMAIL', '--type', 'text'), 'field_name_taken', "a system field's name");
  t.match((await ok('field', 'create', '--instance', b.slug, '--key', 'city', '--name', 'Población', '--type', 'text')).field_key, 'city', 'another instance may use both');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'Bad-Key', '--name', 'X', '--type', 'text'), 'invalid_field_key', 'a malformed key');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'n1', '--name', 'N1', '--type', 'number', '--max-length', '3'), 'field_rule_not_applicable', 'a length on a number');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'n2', '--name', 'N2', '--type', 'number', '--min', '5', '--max', '1'), 'field_rule_invalid', 'min above max');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 's1', '--name', 'S1', '--type', 'select'), 'field_options_required', 'a select without options');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 's2', '--name', 'S2', '--type', 'select', '--options', 'a,a'), 'field_options_invalid', 'a repeated option');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 't1', '--name', 'T1', '--type', 'text', '--options', 'a'), 'field_rule_not_applicable', 'options on text');
  const usage = await cli('field', 'create', '--instance', a.slug, '--key', 't2', '--name', 'T2', '--type', 'colour');
  t.equal(usage.code, 2, 'an unknown type is a usage mistake');
  t.match(usage.stderr, /--type must be one of text, email, phone, number, date, boolean, select/);
});

t.test('a pattern must be valid and provably linear (ReDoS)', async (t) => {
  const unsafe = await cli('field', 'create', '--instance', a.slug, '--key', 'p1', '--name', 'P1', '--type', 'text', '--pattern', '(a+)+b');
  refused(t, unsafe, 'field_pattern_unsafe', 'nested repetition');
  t.match(unsafe.stderr, /exponential/, 'says how bad');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'p2', '--name', 'P2', '--type', 'text', '--pattern', '\\d+\\.?\\d*'), 'field_pattern_unsafe', 'polynomial backtracking');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'p3', '--name', 'P3', '--type', 'text', '--pattern', '[a-'), 'field_pattern_invalid', 'not a regular expression');
  const { rows } = await dbs.pool.query("SELECT count(*)::int AS n FROM fields WHERE field_key IN ('p1', 'p2', 'p3')");
  t.equal(rows[0].n, 0, 'nothing stored');
});

t.test('deactivate, activate, delete: system fields stay; a deleted key is reserved forever, its name free', async (t) => {
  await ok('field', 'create', '--instance', a.slug, '--key', 'nickname', '--name', 'Apodo', '--type', 'text');
  const off = await ok('field', 'deactivate', '--instance', a.slug, '--key', 'nickname');
  t.equal(off.is_active, false);
  t.equal((await get('/v1/fields?page_size=100')).body.data.find((f: any) => f.field_key === 'nickname').is_active, false, 'listed, inactive');
  t.equal((await ok('field', 'activate', '--instance', a.slug, '--key', 'nickname')).is_active, true);
  refused(t, await cli('field', 'delete', '--instance', a.slug, '--key', 'email'), 'field_is_system', 'delete email');
  refused(t, await cli('field', 'delete', '--instance', a.slug, '--key', 'phone'), 'field_is_system', 'delete phone');
  refused(t, await cli('field', 'deactivate', '--instance', a.slug, '--key', 'phone'), 'field_is_system', 'deactivate phone');
  const deleted = await ok('field', 'delete', '--instance', a.slug, '--key', 'nickname');
  t.equal(deleted.field_key, 'nickname', 'prints the field as it was');
  t.notOk((await get('/v1/fields?page_size=100')).body.data.some((f: any) => f.field_key === 'nickname'), 'gone from the catalog');
  refused(t, await cli('field', 'create', '--instance', a.slug, '--key', 'nickname', '--name', 'Other', '--type', 'text'), 'field_key_reserved', "a deleted field's key");
  t.equal((await ok('field', 'create', '--instance', a.slug, '--key', 'alias', '--name', 'APODO', '--type', 'text')).name, 'APODO', "a deleted field's name is free");
  refused(t, await cli('field', 'delete', '--instance', a.slug, '--key', 'nickname'), 'field_not_found', 'deleted twice');
  refused(t, await cli('field', 'delete', '--instance', b.slug, '--key', 'alias'), 'field_not_found', "another instance's field");
});
