import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { createField, setFieldActive } from '../domain/fields/catalog.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { childEnv, cliRunner, oneJsonObject, type CliResult } from './helpers/spawn.js';
import { tempDir } from './helpers/temp-dir.js';

/**
 * CSV lists (issue 14), panel-only: `cartero list create|upload|show|delete` as a user runs them,
 * every list_* code of the spec, and an append of the same file twice.
 */

const dbs = await testDatabases(t, 'listscli');
const cli = cliRunner(t, childEnv({ DATABASE_URL: dbs.databaseUrl }, ['CLICKHOUSE_URL', 'PORT', 'NODE_OPTIONS']), { inProcess: true });
const a = await makeTenant(dbs.pool);
const b = await makeTenant(dbs.pool);
const { dir, file } = tempDir(t, 'cartero-lists-');

await createField(a.tenant, dbs.pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 10 });
await createField(a.tenant, dbs.pool, { key: 'age', name: 'Age', type: 'number' });
await createField(a.tenant, dbs.pool, { key: 'retired', name: 'Retired', type: 'text' });
await setFieldActive(a.tenant, dbs.pool, 'retired', false);

const ok = async (...args: string[]) => oneJsonObject(await cli(...args));
function refused(t: Test, r: CliResult, code: string, what: string): void {
  t.equal(r.code, 1, `${what}: exit 1`);
  t.equal(r.stdout, '', `${what}: nothing on stdout`);
  t.match(r.stderr, new RegExp(`: \\d{3} ${code}: `), `${what}: ${code}`);
}
async function storedRows(listId: number): Promise<number> {
  const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM list_rows WHERE list_id = $1', [listId]);
  return rows[0].n;
}

t.test('create, and every declaration refusal', async (t) => {
  // Through `node bin/cartero.js` itself, once: the other commands of this file run in process (test/helpers/spawn.ts's cliRunner).
  const made = oneJsonObject(await cli.spawned('list', 'create', '--instance', a.slug, '--name', 'Campaña', '--columns', 'email:1,first_name:3', '--max-rows', '50'));
  t.match(made, { name: 'Campaña', max_rows: 50, rows: 0, uploads: [], columns: [{ field_key: 'email', position: 1 }, { field_key: 'first_name', position: 3 }] });
  t.same(await ok('list', 'show', '--instance', a.slug, '--id', String(made.id)), made, 'show prints the same');
  refused(t, await cli('list', 'create', '--instance', a.slug, '--name', 'CAMPANA', '--columns', 'email:1'), 'list_name_taken', 'a name differing in case and accents');
  refused(t, await cli('list', 'create', '--instance', a.slug, '--name', 'L1', '--columns', 'email:1,email:2'), 'list_field_duplicated', 'a repeated field');
  refused(t, await cli('list', 'create', '--instance', a.slug, '--name', 'L2', '--columns', 'email:1,first_name:1'), 'list_field_position_duplicated', 'one position twice');
  refused(t, await cli('list', 'create', '--instance', a.slug, '--name', 'L3', '--columns', 'email:1,shoe:2'), 'list_field_not_found', 'a field not in the catalog');
  refused(t, await cli('list', 'create', '--instance', a.slug, '--name', 'L4', '--columns', 'email:1,retired:2'), 'list_field_inactive', 'a deactivated field');
  t.equal((await cli('list', 'create', '--instance', a.slug, '--name', 'L5', '--columns', 'email:0')).code, 2, 'position 0 is a usage mistake');
  t.equal((await ok('list', 'create', '--instance', b.slug, '--name', 'Campaña', '--columns', 'email:1')).name, 'Campaña', 'another instance may use the name');
  refused(t, await cli('list', 'show', '--instance', b.slug, '--id', String(made.id)), 'list_not_found', "another instance's list");
  refused(t, await cli('field', 'delete', '--instance', a.slug, '--key', 'first_name'), 'field_in_use', 'a field a list declares cannot be deleted');
});

t.test('upload: rows checked by the catalog, the same file appended twice is refused', async (t) => {
  const list = await ok('list', 'create', '--instance', a.slug, '--name', 'Fair', '--columns', 'email:1,first_name:2,age:3');
  const path = file('fair.csv', 'email,first_name,age\nAnn@Example.com,Ann,30\nbob@example.com,Bartholomew,40\ncarla@example.com,Carla,\n,,\n');
  const first = await ok('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', path, '--mode', 'append', '--header');
  t.match(first, { rows: 4, accepted: 2, rejected: 2, rejects_file: `${path}.rejected.csv` });
  t.same(first.first_rejects, [
    { row: 2, code: 'field_value_invalid', field: 'first_name', rule: 'max_length', detail: 'first_name: The value has more than 10 characters' },
    { row: 4, code: 'row_empty', field: null, rule: null, detail: 'the row has no value in any declared column' },
  ]);
  t.equal(readFileSync(first.rejects_file, 'utf8').split('\n')[1], '2,field_value_invalid,first_name,max_length,first_name: The value has more than 10 characters,bob@example.com,Bartholomew,40');
  t.match(first.list, { rows: 2, uploads: [{ mode: 'append', file_name: 'fair.csv', rows: 2, rejected: 2 }] });
  t.match(first.list.uploads[0].content_sha256, /^[0-9a-f]{64}$/);
  const { rows } = await dbs.pool.query('SELECT row, values FROM list_rows WHERE list_id = $1 ORDER BY row', [list.id]);
  t.same(rows, [{ row: 1, values: { email: 'ann@example.com', first_name: 'Ann', age: 30 } }, { row: 3, values: { email: 'carla@example.com', first_name: 'Carla' } }]);

  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', path, '--mode', 'append', '--header'), 'list_import_duplicated', 'the same file appended again');
  const copy = file('fair-copy.csv', readFileSync(path, 'utf8'));
  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', copy, '--mode', 'append'), 'list_import_duplicated', 'identical content under another name');
  t.equal((await ok('list', 'show', '--instance', a.slug, '--id', String(list.id))).rows, 2, 'nothing added by a refused append');

  const other = await ok('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('more.csv', 'dan@example.com,Dan,50\n'), '--mode', 'append');
  t.match(other, { rows: 1, accepted: 1, list: { rows: 3 } }, 'without --header the first row is data');
  const over = await ok('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', path, '--mode', 'overwrite', '--header');
  t.match(over, { accepted: 2, list: { rows: 2, uploads: [{ mode: 'overwrite', rows: 2 }] } }, 'overwrite: the same file may be put back; the list is the file');
  t.equal(over.list.uploads.length, 1);
  t.equal(await storedRows(list.id), 2, "the replaced uploads' rows are deleted");
});

t.test('upload: a cell that is not UTF-8 text or holds NUL refuses its row, with its line; the rejects file is formula-guarded', async (t) => {
  const list = await ok('list', 'create', '--instance', a.slug, '--name', 'Bytes', '--columns', 'email:1,first_name:2');
  const path = join(dir, 'bytes.csv');
  writeFileSync(path, Buffer.concat([
    Buffer.from('ann@example.com,Ann\n'), //                                          line 1, row 1
    Buffer.from('nul@example.com,"N\0"\n'), //                                        line 2, row 2: NUL
    Buffer.from('lat@example.com,Ren'), Buffer.from([0xe9]), Buffer.from('\n'), //     line 3, row 3: Latin-1
    Buffer.from('\n'), //                                                              line 4: blank
    Buffer.from('cesu@example.com,X'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\n'), // line 5, row 4: CESU-8 surrogate
    Buffer.from('"=HYPERLINK(""http://evil.example"")",@SUM(1)\n'), //                 line 6, row 5: not an address
    Buffer.from('bob@example.com,Bob,extra '), Buffer.from([0xff]), Buffer.from('\n'), // line 7, row 6: an undeclared column
  ]));
  const r = await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', path, '--mode', 'append');
  t.equal(r.code, 0, `not aborted: ${r.stderr}`);
  const summary = oneJsonObject(r);
  t.match(summary, { rows: 6, accepted: 1, rejected: 5 });
  t.same(summary.first_rejects.map((x: any) => [x.row, x.code, x.field, x.detail]), [
    [2, 'value_error.nul_character', 'first_name', 'line 2, column 2: the cell holds the NUL character (U+0000), which no value may hold'],
    [3, 'value_error.invalid_utf8', 'first_name', 'line 3, column 2: the cell is not valid UTF-8 text (save the file as UTF-8)'],
    [4, 'value_error.invalid_utf8', 'first_name', 'line 5, column 2: the cell is not valid UTF-8 text (save the file as UTF-8)'],
    [5, 'field_value_invalid', 'email', 'email: The value is not an email address'],
    [6, 'value_error.invalid_utf8', null, 'line 7, column 3: the cell is not valid UTF-8 text (save the file as UTF-8)'],
  ]);
  const { rows } = await dbs.pool.query('SELECT row, values FROM list_rows WHERE list_id = $1 ORDER BY row', [list.id]);
  t.same(rows, [{ row: 1, values: { email: 'ann@example.com', first_name: 'Ann' } }], 'nothing of a refused row written');
  const rejects = readFileSync(summary.rejects_file, 'utf8').split('\n');
  t.equal(rejects[4], `5,field_value_invalid,email,format,email: The value is not an email address,"'=HYPERLINK(""http://evil.example"")",'@SUM(1)`, 'formula cells guarded');

  const header = join(dir, 'header.csv');
  writeFileSync(header, Buffer.concat([Buffer.from('email,'), Buffer.from([0xe9]), Buffer.from('\nann@example.com,Ann\n')]));
  const whole = await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', header, '--mode', 'append', '--header');
  refused(t, whole, 'list_import_csv_invalid', 'a header that is not UTF-8');
  t.match(whole.stderr, "line 1: the header's cell 2 is not valid UTF-8 text");
  t.equal(await storedRows(list.id), 1, 'nothing added by a refused file');

  // csv-parse's INVALID_OPENING_QUOTE has no CSV_ prefix: it too is the file's 400, saying the line, not the library's raw text.
  const quote = await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('quote.csv', 'x@example.com,X\ny@example.com,a"b"\n'), '--mode', 'append');
  refused(t, quote, 'list_import_csv_invalid', 'a quote inside an unquoted cell');
  t.match(quote.stderr, 'the file is not valid CSV: Invalid Opening Quote (line 2)');
  t.equal(await storedRows(list.id), 1, 'nothing added by an invalid file');
});

t.test('list_size_exceeded counts what the list holds plus the file; an overwrite only the file', async (t) => {
  const list = await ok('list', 'create', '--instance', a.slug, '--name', 'Small', '--columns', 'email:1', '--max-rows', '5');
  const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => `u${from + i}@example.com`).join('\n') + '\n';
  t.match(await ok('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('s1.csv', rows(0, 3)), '--mode', 'append'), { list: { rows: 3 } });
  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('s2.csv', rows(10, 3)), '--mode', 'append'), 'list_size_exceeded', '3 held + 3 > 5');
  t.match(await ok('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('s3.csv', rows(20, 2)), '--mode', 'append'), { list: { rows: 5 } }, '3 + 2 = 5 fits');
  t.match(await ok('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('s4.csv', rows(30, 5)), '--mode', 'overwrite'), { list: { rows: 5 } }, 'an overwrite of 5 fits a full list');
  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('s5.csv', rows(40, 6)), '--mode', 'overwrite'), 'list_size_exceeded', 'an overwrite of 6');
  t.equal(await storedRows(list.id), 5, 'a refused upload leaves the list as it was');
});

t.test('a list without columns takes no file; a field deactivated since is refused', async (t) => {
  const bare = await ok('list', 'create', '--instance', a.slug, '--name', 'Bare');
  t.same(bare.columns, []);
  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(bare.id), '--file', file('x.csv', 'a@example.com\n'), '--mode', 'append'), 'list_has_no_fields', 'no columns');
  await createField(a.tenant, dbs.pool, { key: 'city', name: 'City', type: 'text' });
  const list = await ok('list', 'create', '--instance', a.slug, '--name', 'Cities', '--columns', 'email:1,city:2');
  await setFieldActive(a.tenant, dbs.pool, 'city', false);
  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('c.csv', 'a@example.com,Soria\n'), '--mode', 'append'), 'list_field_inactive', 'a field deactivated after creation');
  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('q.csv', 'a@example.com,"Soria\n'), '--mode', 'overwrite'), 'list_field_inactive', 'checked before reading');
  await setFieldActive(a.tenant, dbs.pool, 'city', true);
  refused(t, await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('q2.csv', 'a@example.com,"Soria\n'), '--mode', 'overwrite'), 'list_import_csv_invalid', 'invalid CSV');
  t.equal((await cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', 'x', '--mode', 'merge')).code, 2, 'an unknown mode is a usage mistake');
});

t.test('two identical appends at once: one imports, the other is refused while it runs', async (t) => {
  const list = await ok('list', 'create', '--instance', a.slug, '--name', 'Race', '--columns', 'email:1,first_name:2');
  const path = file('race.csv', Array.from({ length: 150_000 }, (_, i) => `r${i}@example.com,N${i}`).join('\n') + '\n');
  const [x, y] = await Promise.all([
    cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', path, '--mode', 'append'),
    cli('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', path, '--mode', 'append'),
  ]);
  const [winner, loser] = x.code === 0 ? [x, y] : [y, x];
  t.equal(oneJsonObject(winner).accepted, 150_000, 'one imports the file');
  refused(t, loser, 'list_import_duplicated', 'the other');
  t.equal(await storedRows(list.id), 150_000);
});

t.test('delete: rows gone, name free', async (t) => {
  const list = await ok('list', 'create', '--instance', a.slug, '--name', 'Temp', '--columns', 'email:1');
  await ok('list', 'upload', '--instance', a.slug, '--id', String(list.id), '--file', file('t.csv', 'a@example.com\nb@example.com\n'), '--mode', 'append');
  const gone = await ok('list', 'delete', '--instance', a.slug, '--id', String(list.id));
  t.match(gone, { id: list.id, rows: 2 }, 'prints the list as it was');
  t.equal(await storedRows(list.id), 0, 'its rows are deleted');
  refused(t, await cli('list', 'show', '--instance', a.slug, '--id', String(list.id)), 'list_not_found', 'gone');
  refused(t, await cli('list', 'delete', '--instance', a.slug, '--id', String(list.id)), 'list_not_found', 'deleted twice');
  t.equal((await ok('list', 'create', '--instance', a.slug, '--name', 'TEMP', '--columns', 'email:1')).name, 'TEMP', "a deleted list's name is free");
});
