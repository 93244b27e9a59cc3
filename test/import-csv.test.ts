import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import t, { type Test } from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { formulaGuardSql } from '../engines/csv/formula-guard.js';
import { createDataset } from '../domain/datasets/datasets.js';
import { createField } from '../domain/fields/catalog.js';
import { projectRoot } from '../config/paths.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { childEnv, cliRunner, oneJsonObject, sleep, type CliResult } from './helpers/spawn.js';
import { startTestWeb } from './helpers/web.js';
import { tempDir } from './helpers/temp-dir.js';

/**
 * `cartero dataset import` (issue 14) as a user runs it: a 100,000-row CSV with bad rows mixed
 * in (every count exact, every refused row in the rejects file with its reason), re-imported
 * (nothing changes), column mapping and its refusals, and an import that fails or is killed
 * midway leaving nothing behind.
 */

const dbs = await testDatabases(t, 'importcsv');
const { url } = await startTestWeb(t, dbs);
const env = childEnv({ DATABASE_URL: dbs.databaseUrl }, ['CLICKHOUSE_URL', 'PORT', 'NODE_OPTIONS']);
// In this process but for the binary's own checks: one import (its stderr off a terminal) and the killed one.
const cli = cliRunner(t, env, { inProcess: true });
const a = await makeTenant(dbs.pool, { scopes: ['dataset:read'] });
const { dir } = tempDir(t, 'cartero-import-');

await createField(a.tenant, dbs.pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 20 });
await createField(a.tenant, dbs.pool, { key: 'age', name: 'Age', type: 'number', min: 0, max: 130 });
await createField(a.tenant, dbs.pool, { key: 'plan', name: 'Plan', type: 'select', options: ['free', 'pro'] });
await createField(a.tenant, dbs.pool, { key: 'notes', name: 'Notes', type: 'text' });
const columns = [{ key: 'email', required: true }, { key: 'first_name', required: true }, { key: 'age', required: false }, { key: 'plan', required: false }];
const dataset = (name: string) => createDataset(a.tenant, dbs.pool, { name, channel: ['mail'], columns });

async function records(id: number): Promise<number> {
  const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM dataset_records WHERE dataset_id = $1', [id]);
  return rows[0].n;
}

function refused(t: Test, r: CliResult, code: string, what: string): void {
  t.equal(r.code, 1, `${what}: exit 1`);
  t.equal(r.stdout, '', `${what}: nothing on stdout`);
  t.match(r.stderr, new RegExp(`: \\d{3} ${code}: `), `${what}: ${code}`);
}

/** A whole file refused as invalid CSV: the refusal saying `why`, no rejects file beside it, and the dataset still with `kept` records. */
async function fileRefused(t: Test, r: CliResult, file: string, datasetId: number, kept: number, what: string, why: string): Promise<void> {
  refused(t, r, 'dataset_import_csv_invalid', what);
  t.match(r.stderr, why);
  t.notOk(existsSync(`${file}.rejected.csv`), 'no rejects file from a refused file');
  t.equal(await records(datasetId), kept, 'nothing imported from it');
}

/**
 * 100,000 data rows. Bad rows at fixed strides, each refused for the first rule it breaks (in
 * checkContact's order), and repeated identifiers merged into their first row: the expected
 * counts are computed alongside, so they are exact.
 */
function bigFile() {
  const lines = ['email,first_name,age,plan'];
  const expected = { rows: 0, rejected: 0, byCode: {} as Record<string, number>, identifiers: new Set<string>(), merged: new Map<string, Record<string, unknown>>() };
  const reject = (code: string) => {
    expected.rejected++;
    expected.byCode[code] = (expected.byCode[code] ?? 0) + 1;
  };
  for (let i = 1; i <= 100_000; i++) {
    expected.rows++;
    let email = `user${i}@example.com`;
    if (i % 211 === 0) email = `USER${i - 100}@Example.com`; // a repeat of an earlier row, in other case
    let first = `Name${i}`;
    let age = String(i % 100);
    let plan = i % 3 === 0 ? 'pro' : 'free';
    let extra = '';
    if (i % 101 === 0) email = '';
    else if (i % 103 === 0) first = ' ';
    else if (i % 97 === 0) age = 'old';
    else if (i % 89 === 0) plan = 'gold';
    else if (i % 107 === 0) extra = ',surplus';
    else if (i % 109 === 0) first = `"Quoted, with ""comma"""`;
    lines.push(`${email},${first},${age},${plan}${extra}`);
    if (i % 101 === 0) reject('dataset_identity_value_missing');
    else if (i % 103 === 0) reject('dataset_required_column_missing');
    else if (i % 97 === 0 || i % 89 === 0) reject('field_value_invalid');
    else if (i % 107 === 0) reject('row_malformed');
    else {
      const id = email.toLowerCase();
      expected.identifiers.add(id);
      expected.merged.set(id, { ...expected.merged.get(id), email: id, first_name: i % 109 === 0 ? 'Quoted, with "comma"' : first, age: i % 100, plan });
    }
  }
  return { text: lines.join('\n') + '\n', expected };
}

const big = bigFile();
const bigPath = join(dir, 'contacts.csv');
writeFileSync(bigPath, big.text);

t.test('100,000 rows with bad ones mixed in: every count exact', async (t) => {
  const target = await dataset('Big');
  const r = await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', bigPath);
  const summary = oneJsonObject(r);
  t.equal(r.stderr, '', 'no progress bar off a terminal');
  const accepted = big.expected.rows - big.expected.rejected;
  t.match(summary, {
    dataset_id: target.id,
    rows: 100_000,
    rejected: big.expected.rejected,
    accepted,
    created: big.expected.identifiers.size,
    updated: 0,
    unchanged: 0,
    duplicates: accepted - big.expected.identifiers.size,
    rejects_file: `${bigPath}.rejected.csv`,
  });
  t.ok(big.expected.rejected > 3000 && summary.duplicates > 300, `a real mix (${big.expected.rejected} refused, ${summary.duplicates} repeats)`);
  t.equal(await records(target.id), big.expected.identifiers.size, 'one record per identifier');

  t.same(summary.first_rejects[0], { row: 89, code: 'field_value_invalid', field: 'plan', rule: 'options', detail: 'plan: The value is not one of the field’s options' });
  t.same(summary.first_rejects.slice(1, 4).map((x: any) => [x.row, x.code]), [[97, 'field_value_invalid'], [101, 'dataset_identity_value_missing'], [103, 'dataset_required_column_missing']]);
  t.equal(summary.first_rejects.length, 10);

  const rejectsFile = readFileSync(summary.rejects_file, 'utf8').trimEnd().split('\n');
  t.equal(rejectsFile.length, big.expected.rejected + 1, 'every refused row in the rejects file, after its header');
  t.equal(rejectsFile[0], 'row,code,field,rule,detail,email,first_name,age,plan');
  t.equal(rejectsFile[2], '97,field_value_invalid,age,type,age: The value must be a number,user97@example.com,Name97,old,free', 'the row as it was, after its reason');
  const codes: Record<string, number> = {};
  for (const line of rejectsFile.slice(1)) {
    const code = line.split(',')[1]!;
    codes[code] = (codes[code] ?? 0) + 1;
  }
  t.same(codes, big.expected.byCode, 'each reason as often as the file has it');

  // What the API shows: merged rows, typed values, a quoted cell read whole.
  const res = await fetch(`${url}/v1/datasets/${target.id}/records?identifier=user109@example.com`, { headers: a.headers });
  t.same(((await res.json()) as any).data[0].values, big.expected.merged.get('user109@example.com'));
  const repeated = await fetch(`${url}/v1/datasets/${target.id}/records?identifier=user111@example.com`, { headers: a.headers });
  t.same(((await repeated.json()) as any).data[0].values, big.expected.merged.get('user111@example.com'), 'a repeated identifier: its rows merged in file order');

  const again = oneJsonObject(await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', bigPath));
  t.match(again, { created: 0, updated: 0, unchanged: big.expected.identifiers.size, rejected: big.expected.rejected }, 'the same file again changes nothing');
  const { rows } = await dbs.pool.query('SELECT count(*)::int AS n FROM dataset_records WHERE dataset_id = $1 AND updated_at > created_at', [target.id]);
  t.equal(rows[0].n, 0, 'no record rewritten');
});

t.test('a second file merges into the stored contacts, rows of one identifier in file order', async (t) => {
  const target = await dataset('Merge');
  const path = join(dir, 'merge.csv');
  writeFileSync(path, 'email,first_name,age\nann@example.com,Ann,30\n');
  const first = await cli.spawned('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path);
  t.match(oneJsonObject(first), { rows: 1, created: 1 }, 'the binary imports');
  t.equal(first.stderr, '', 'the binary: no progress bar off a terminal');
  writeFileSync(path, '\uFEFFemail,first_name,age\nANN@example.com,Annie,\nbob@example.com,Bob,40\nann@example.com,Annie,30\n');
  const summary = oneJsonObject(await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path));
  t.match(summary, { rows: 3, accepted: 3, created: 1, updated: 1, unchanged: 0, duplicates: 1, rejected: 0, rejects_file: null });
  t.notOk(existsSync(`${path}.rejected.csv`), 'no rejects file when nothing was refused');
  const { rows } = await dbs.pool.query('SELECT identifier, values FROM dataset_records WHERE dataset_id = $1 ORDER BY identifier', [target.id]);
  t.same(rows, [
    { identifier: 'ann@example.com', values: { email: 'ann@example.com', first_name: 'Annie', age: 30 } },
    { identifier: 'bob@example.com', values: { email: 'bob@example.com', first_name: 'Bob', age: 40 } },
  ], 'an empty cell erases nothing; a BOM is not part of the first header');
});

t.test('--map, and every mapping refusal (nothing imported)', async (t) => {
  const target = await dataset('Mapped');
  const path = join(dir, 'mapped.csv');
  writeFileSync(path, 'E-mail,Name,Comment\nann@example.com,Ann,hello\n');
  const ok = oneJsonObject(await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path, '--map', 'E-mail=email,Name=first_name,Comment=skip'));
  t.match(ok, { created: 1, rejected: 0 });
  const refusals: Array<[string, string[], string, string]> = [
    ['a column mapped to no field', ['--map', 'E-mail=email,Name=,Comment=skip'], 'dataset_import_field_id_required', path],
    ['a column mapped to a field not in the catalog', ['--map', 'E-mail=email,Name=nickname,Comment=skip'], 'dataset_import_field_not_found', path],
    ['an unmapped header that is no field', ['--map', 'E-mail=email,Name=first_name'], 'dataset_import_field_not_found', path],
    ['a catalog field the dataset does not declare', ['--map', 'E-mail=email,Name=first_name,Comment=notes'], 'dataset_column_not_declared', path],
    ['two columns into one field', ['--map', 'E-mail=email,Name=first_name,Comment=first_name'], 'dataset_field_duplicated', path],
    ['no column for the identifier', ['--map', 'E-mail=skip,Name=first_name,Comment=skip'], 'dataset_identity_value_missing', path],
    ['no column for a required field', ['--map', 'E-mail=email,Name=skip,Comment=skip'], 'dataset_required_column_missing', path],
    ['a --map column the file lacks', ['--map', 'Mail=email'], 'dataset_import_column_not_found', path],
  ];
  for (const [what, flags, code, file] of refusals) {
    refused(t, await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', file, ...flags), code, what);
  }
  t.equal(await records(target.id), 1, 'nothing imported by a refused mapping');
  refused(t, await cli('dataset', 'import', '--instance', a.slug, '--id', '999999', '--file', path), 'dataset_not_found', 'an unknown dataset');
  refused(t, await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', join(dir, 'none.csv')), 'file_unreadable', 'a missing file');
  writeFileSync(join(dir, 'empty.csv'), '');
  refused(t, await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', join(dir, 'empty.csv')), 'dataset_import_file_empty', 'an empty file');
  t.equal((await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path, '--map', 'nonsense')).code, 2, 'a malformed --map is a usage mistake');
});

t.test('a cell that is not UTF-8 text, or holds NUL: its row refused with its line, the rest imported', async (t) => {
  const target = await dataset('Text');
  const path = join(dir, 'bytes.csv');
  writeFileSync(path, Buffer.concat([
    Buffer.from('email,first_name,age,plan\n'), //                                  line 1
    Buffer.from('ann@example.com,Ann,30,free\n'), //                                line 2, row 1
    Buffer.from('nul@example.com,"Nu\0ll",31,free\n'), //                           line 3, row 2: NUL
    Buffer.from('\n'), //                                                            line 4: blank, not a row
    Buffer.from('lat@example.com,Ren'), Buffer.from([0xe9]), Buffer.from(',32,free\n'), // line 5, row 3: Latin-1 é
    Buffer.from('two@example.com,"Two\nlines",33,free\n'), //                       lines 6-7, row 4
    Buffer.from('cesu@example.com,X'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(',34,pro\n'), // line 8, row 5: a lone surrogate as CESU-8
    Buffer.from('bob@example.com,Bob,40,pro\n'), //                                line 9, row 6
  ]));
  const r = await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path);
  t.equal(r.code, 0, `not aborted: ${r.stderr}`);
  const summary = oneJsonObject(r);
  t.match(summary, { rows: 6, accepted: 3, rejected: 3, created: 3, rejects_file: `${path}.rejected.csv` });
  t.same(summary.first_rejects, [
    { row: 2, code: 'value_error.nul_character', field: 'first_name', rule: null, detail: 'line 3, column "first_name": the cell holds the NUL character (U+0000), which no value may hold' },
    { row: 3, code: 'value_error.invalid_utf8', field: 'first_name', rule: null, detail: 'line 5, column "first_name": the cell is not valid UTF-8 text (save the file as UTF-8)' },
    { row: 5, code: 'value_error.invalid_utf8', field: 'first_name', rule: null, detail: 'line 8, column "first_name": the cell is not valid UTF-8 text (save the file as UTF-8)' },
  ]);
  const { rows } = await dbs.pool.query('SELECT identifier FROM dataset_records WHERE dataset_id = $1 ORDER BY identifier', [target.id]);
  t.same(rows.map((x) => x.identifier), ['ann@example.com', 'bob@example.com', 'two@example.com'], 'nothing of a refused row written');
  const rejects = parseCsv(readFileSync(summary.rejects_file)) as string[][];
  t.same(rejects.slice(1).map((x) => [x[0], x[1], x[6]]), [['2', 'value_error.nul_character', 'Nu\0ll'], ['3', 'value_error.invalid_utf8', 'Ren\uFFFD'], ['5', 'value_error.invalid_utf8', 'X\uFFFD\uFFFD\uFFFD']],
    'the rows in the rejects file, invalid bytes shown as U+FFFD');

  const header = join(dir, 'latin1-header.csv');
  writeFileSync(header, Buffer.concat([Buffer.from('email,first_name,'), Buffer.from([0xe2, 0x67, 0x65]), Buffer.from('\nann@example.com,Ann,1\n')]));
  const whole = await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', header);
  await fileRefused(t, whole, header, target.id, 3, 'a header that is not UTF-8', "line 1: the header's cell 3 is not valid UTF-8 text");
});

t.test('CSV_MAX_CELL_BYTES and CSV_MAX_RECORD_BYTES bound the CLI as the panel: a row refused for a large cell, a file for a large record', async (t) => {
  // Small configured bounds, so the files stay small: a cell of 2 KiB, a record of 8 KiB.
  const bounded = cliRunner(t, { ...env, CSV_MAX_CELL_BYTES: '2048', CSV_MAX_RECORD_BYTES: '8192' }, { inProcess: true });
  const target = await dataset('Bounds');
  const path = join(dir, 'bounds.csv');
  writeFileSync(path, ['email,first_name,age,plan', 'ann@example.com,Ann,30,free', `big@example.com,Big,31,${'x'.repeat(3000)}`, 'bob@example.com,Bob,40,pro', ''].join('\n'));
  const r = await bounded('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path);
  t.equal(r.code, 0, `not aborted: ${r.stderr}`);
  const summary = oneJsonObject(r);
  t.match(summary, { rows: 3, accepted: 2, rejected: 1, created: 2 });
  t.same(summary.first_rejects, [
    { row: 2, code: 'value_error.too_large', field: 'plan', rule: null, detail: 'line 3, column "plan": the cell has 3000 bytes, over the 2048 a cell may have (CSV_MAX_CELL_BYTES)' },
  ]);
  const plain = await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path);
  t.match(oneJsonObject(plain).first_rejects, [{ row: 2, code: 'field_value_invalid', field: 'plan' }], 'under the default bound the same cell is read, and refused as a value');

  const wide = join(dir, 'wide.csv');
  writeFileSync(wide, ['email,first_name,age,plan', 'cy@example.com,Cy,30,free', `wide@example.com,${'y'.repeat(2000)},${'1'.repeat(2000)},${'z'.repeat(2000)},${'w'.repeat(2000)},${'v'.repeat(2000)}`, 'dee@example.com,Dee,40,pro', ''].join('\n'));
  const whole = await bounded('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', wide);
  await fileRefused(t, whole, wide, target.id, 2, 'a record over the bound', 'the record starting at line 3 is over 8192 bytes (CSV_MAX_RECORD_BYTES)');
});

t.test('the rejects file: every cell and header through the formula guard exports apply', async (t) => {
  const target = await dataset('Guarded');
  // The spec's cases (test/exports.test.ts), in a column the import skips, on rows refused for their plan.
  const cases = ['-5', '-1200.50', '+56912345678', '=SUM(A1)', "'=x", '\tab', '\rcr', '@x', '-x', 'plain', '', "''+1", "'-5", '-.5', '-1e5', '-', '5', 'a=b', '"=x"\nline 2',
    '=HYPERLINK("http://evil.example","click")', '@SUM(1)'];
  const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;
  const path = join(dir, 'formulas.csv');
  writeFileSync(path, ['email,first_name,plan,+h,@h,\'-h,-5', ...cases.map((c, i) => `f${i}@example.com,"=1+1",gold,${quote(c)},x,x,x`)].join('\n') + '\n');
  const summary = oneJsonObject(await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', path, '--map', "+h=skip,@h=skip,'-h=skip,-5=skip"));
  t.match(summary, { rows: cases.length, rejected: cases.length });
  const written = parseCsv(readFileSync(summary.rejects_file), { relax_column_count: true }) as string[][];
  const ch = createClickHouseClient(dbs.clickhouseUrl);
  t.teardown(() => ch.close());
  const guard = async (cells: string[]) => {
    const rs = await ch.query({ query: `SELECT arrayMap(x -> ${formulaGuardSql('x')}, {cells:Array(String)}) AS g`, query_params: { cells }, format: 'JSONEachRow' });
    return ((await rs.json()) as Array<{ g: string[] }>)[0]!.g;
  };
  const header = ['row', 'code', 'field', 'rule', 'detail', 'email', 'first_name', 'plan', '+h', '@h', "'-h", '-5'];
  t.same(written[0], await guard(header), 'the header, as ClickHouse guards it in an export');
  t.same(written[0]!.slice(8), ["'+h", "'@h", "''-h", '-5']);
  t.same(written.slice(1).map((x) => x[8]), await guard(cases), 'each case, as ClickHouse guards it in an export');
  t.same(written.slice(1).map((x) => x[6]), cases.map(() => "'=1+1"), 'a refused value too');
  t.equal(written[20]![8], `'=HYPERLINK("http://evil.example","click")`);
  t.equal(written[21]![8], "'@SUM(1)");
  t.equal(written[1]![8], '-5', 'a number is left alone');
});

t.test('all or nothing: a failure at the last row, or a kill mid-import, leaves nothing', async (t) => {
  const target = await dataset('Atomic');
  const broken = join(dir, 'broken.csv');
  writeFileSync(broken, big.text + 'last@example.com,"unclosed,1,free\n');
  const r = await cli('dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', broken);
  refused(t, r, 'dataset_import_csv_invalid', 'invalid CSV on the last line');
  t.equal(await records(target.id), 0, '99,999 good rows before it: none imported');
  t.notOk(existsSync(`${broken}.rejected.csv`), 'no rejects file from a failed import');

  const child = spawn(process.execPath, [join(projectRoot, 'bin', 'cartero.js'), 'dataset', 'import', '--instance', a.slug, '--id', String(target.id), '--file', bigPath],
    { cwd: projectRoot, env, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let copying = false;
  for (let i = 0; i < 600 && !copying; i++) {
    const { rows } = await dbs.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'cartero-cli' AND query LIKE 'COPY import_rows%'");
    copying = rows[0].n > 0;
    if (!copying) await sleep(50);
  }
  t.ok(copying, 'the import was streaming rows when killed');
  child.kill('SIGKILL');
  await exited;
  for (let i = 0; i < 100; i++) {
    const { rows } = await dbs.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'cartero-cli'");
    if (rows[0].n === 0) break;
    await sleep(100);
  }
  t.equal(await records(target.id), 0, 'killed midway: nothing imported');
});
