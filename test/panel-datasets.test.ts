import t from 'tap';
import { request } from 'node:http';
import { panelApiBench, panelHeaders } from './helpers/panel.js';
import { sleep } from './helpers/wait.js';
import { formulaGuard } from '../engines/csv/formula-guard.js';

/**
 * Datasets, fields and lists in the panel's /v1/private API (issue 31, docs/panel.md "Datasets,
 * fields and imports"), against the real web app, Postgres and ClickHouse: the roles, the field
 * catalog's rules, datasets created and changed with their refusals, the contact search equal to
 * the public API's, a 10,000-row CSV import sent slowly while its progress is polled to 100 %,
 * its rejects file, CSV lists, another instance's ids 404.
 */

const { url, a, b, owner, admin, viewer, ownerOfB, call, publicCall } = await panelApiBench(t, 'paneldatasets', ['dataset:read', 'dataset:write']);

/** A CSV body sent with its Content-Length, in chunks, waiting `pauseMs` between them, and `between` run after each. */
function sendCsv(token: string, path: string, csv: string, opts: { chunks?: number; pauseMs?: number; between?: () => Promise<void> } = {}) {
  const bytes = Buffer.from(csv, 'utf8');
  const chunks = opts.chunks ?? 1;
  return new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request(url + path, {
      method: 'POST',
      headers: { ...panelHeaders(token, a.slug), 'content-type': 'text/csv', 'content-length': String(bytes.length) },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers }));
    });
    req.on('error', reject);
    (async () => {
      const size = Math.ceil(bytes.length / chunks);
      for (let at = 0; at < bytes.length; at += size) {
        req.write(bytes.subarray(at, at + size));
        if (opts.pauseMs) await sleep(opts.pauseMs);
        await opts.between?.();
      }
      req.end();
    })().catch(reject);
  });
}

t.test('fields: an admin creates, deactivates and deletes; the rules; a viewer reads only', async (t) => {
  const body = { key: 'city', name: 'City', type: 'text', max_length: 80 };
  const refused = await call(viewer, 'POST', '/v1/private/fields', body);
  t.equal(refused.status, 403, 'a viewer cannot create a field');
  t.equal(refused.body.code, 'forbidden');
  const city = await call(admin, 'POST', '/v1/private/fields', body);
  t.equal(city.status, 201, JSON.stringify(city.body));
  t.match(city.body, { field_key: 'city', name: 'City', type: 'text', rules: { max_length: 80 }, is_system: false, is_active: true });
  t.equal((await call(admin, 'POST', '/v1/private/fields', { ...body, key: 'town', name: 'CITY' })).body.code, 'field_name_taken', 'names ignore case');
  t.equal((await call(admin, 'POST', '/v1/private/fields', { ...body, name: 'Other' })).body.code, 'field_key_already_exists');
  const unsafe = await call(admin, 'POST', '/v1/private/fields', { key: 'code', name: 'Code', type: 'text', pattern: '(a+)+$' });
  t.equal(unsafe.status, 422, 'an unsafe pattern: the 422 of its field');
  t.equal(unsafe.body.errors[0].pointer, '/pattern');
  const badKey = await call(admin, 'POST', '/v1/private/fields', { key: 'Bad-Key', name: 'Bad', type: 'text' });
  t.equal(badKey.status, 422);
  t.equal(badKey.body.errors[0].pointer, '/key');
  const noOptions = await call(admin, 'POST', '/v1/private/fields', { key: 'tier', name: 'Tier', type: 'select' });
  t.equal(noOptions.body.errors?.[0]?.pointer, '/options', 'a select needs its options');

  t.equal((await call(admin, 'PATCH', '/v1/private/fields/email', { is_active: false })).body.code, 'field_is_system', 'email cannot be deactivated');
  t.equal((await call(admin, 'DELETE', '/v1/private/fields/phone')).body.code, 'field_is_system', 'phone cannot be deleted');
  t.equal((await call(viewer, 'PATCH', '/v1/private/fields/city', { is_active: false })).status, 403);
  const off = await call(admin, 'PATCH', '/v1/private/fields/city', { is_active: false });
  t.equal(off.body.is_active, false, 'deactivated');
  t.equal((await call(admin, 'PATCH', '/v1/private/fields/city', { is_active: true })).body.is_active, true, 'active again');

  const temp = await call(admin, 'POST', '/v1/private/fields', { key: 'temp', name: 'Temp', type: 'number', min: 0, max: 10 });
  t.equal(temp.status, 201);
  t.equal((await call(viewer, 'DELETE', '/v1/private/fields/temp')).status, 403, 'a viewer cannot delete');
  t.equal((await call(admin, 'DELETE', '/v1/private/fields/temp')).body.field_key, 'temp', 'deleted, answered as it was');
  t.equal((await call(admin, 'POST', '/v1/private/fields', { key: 'temp', name: 'Temp again', type: 'text' })).body.code, 'field_key_reserved', 'the key is reserved forever');
  t.equal((await call(admin, 'DELETE', '/v1/private/fields/temp')).status, 404, 'deleted: not found');

  const panel = await call(viewer, 'GET', '/v1/private/fields');
  t.equal(panel.status, 200);
  t.equal(panel.headers.get('cache-control'), 'no-store');
  t.same(panel.body, (await publicCall('GET', '/v1/fields')).body, 'the catalog equals GET /v1/fields');
});

let datasetId = 0;

t.test('datasets: create and its refusals, update, activate, the mirrored reads', async (t) => {
  await call(admin, 'POST', '/v1/private/fields', { key: 'first_name', name: 'First name', type: 'text' });
  await call(admin, 'POST', '/v1/private/fields', { key: 'age', name: 'Age', type: 'number', min: 0, max: 150 });
  const body = { name: 'Customers', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'first_name' }, { key: 'city' }] };
  t.equal((await call(viewer, 'POST', '/v1/private/datasets', body)).status, 403, 'a viewer cannot create a dataset');
  const noIdentity = await call(admin, 'POST', '/v1/private/datasets', { ...body, channel: ['mail', 'sms'] });
  t.equal(noIdentity.status, 409);
  t.equal(noIdentity.body.code, 'dataset_identity_field_required', 'several channels: the identity field must be named');
  const missing = await call(admin, 'POST', '/v1/private/datasets', { ...body, columns: [{ key: 'first_name' }] });
  t.equal(missing.body.code, 'dataset_identity_field_missing', 'the columns must hold the identity field');
  t.equal((await call(admin, 'POST', '/v1/private/datasets', { ...body, columns: [{ key: 'email' }, { key: 'nope' }] })).body.code, 'dataset_field_not_found');
  const made = await call(admin, 'POST', '/v1/private/datasets', body);
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.match(made.body, { name: 'Customers', channel: ['mail'], identity_field: 'email', is_active: true });
  datasetId = made.body.id;
  t.equal((await call(admin, 'POST', '/v1/private/datasets', { ...body, name: 'CUSTOMERS' })).body.code, 'dataset_name_taken');

  const path = `/v1/private/datasets/${datasetId}`;
  t.equal((await call(viewer, 'PATCH', path, { is_active: false })).status, 403, 'a viewer cannot change one');
  const changed = await call(admin, 'PATCH', path, { columns: [{ key: 'email', required: true }, { key: 'first_name' }, { key: 'city' }, { key: 'age' }], description: 'Shop' });
  t.equal(changed.status, 200, JSON.stringify(changed.body));
  t.same(changed.body.columns.map((c: { field_key: string }) => c.field_key), ['email', 'first_name', 'city', 'age'], 'the whole declaration replaced');
  t.equal(changed.body.description, 'Shop');
  const off = await call(owner, 'PATCH', path, { is_active: false });
  t.equal(off.body.is_active, false, 'deactivated');
  t.equal((await call(owner, 'PATCH', path, { is_active: true })).body.is_active, true, 'activated');

  for (const p of ['/datasets', `/datasets/${datasetId}`]) {
    const panel = await call(viewer, 'GET', `/v1/private${p}`);
    t.equal(panel.status, 200, p);
    t.same(panel.body, (await publicCall('GET', `/v1${p}`)).body, `GET /v1/private${p} equals GET /v1${p}`);
  }
  t.equal((await call(ownerOfB, 'GET', path, undefined, b.slug)).body.code, 'dataset_not_found', "another instance's dataset: 404");
  t.equal((await call(ownerOfB, 'PATCH', `/v1/private/datasets/${datasetId}`, { is_active: false }, b.slug)).status, 404);
});

t.test('a 10,000-row CSV import from the panel: progress polled to 100 %, the summary, the rejects file; search equals the public API', async (t) => {
  const rows = ['email,first_name,town,ignored'];
  for (let i = 0; i < 10_000; i++) {
    if (i % 1000 === 7) rows.push(`bad-${i},=SUM(A1),Lima,z`); // refused: not an email; a formula cell
    else rows.push(`person${i}@example.org,Name ${i},${i % 2 ? 'Lima' : 'Madrid'},z`);
  }
  const csv = rows.join('\n') + '\n';
  const key = 'import-10k-a';
  const map = encodeURIComponent(JSON.stringify({ town: 'city', ignored: null }));

  t.equal((await sendCsv(viewer, `/v1/private/datasets/${datasetId}/imports?key=${key}`, 'email\n')).status, 403, 'a viewer cannot import');
  const seen: Array<{ status: string; percent: number | null; bytes_read: number }> = [];
  const poll = async () => {
    const p = await call(admin, 'GET', `/v1/private/imports/${key}`);
    if (p.status === 200) seen.push({ status: p.body.status, percent: p.body.percent, bytes_read: p.body.bytes_read });
  };
  const done = await sendCsv(admin, `/v1/private/datasets/${datasetId}/imports?key=${key}&map=${map}`, csv, { chunks: 20, pauseMs: 40, between: poll });
  t.equal(done.status, 200, JSON.stringify(done.body).slice(0, 300));
  t.match(done.body, { key, dataset_id: datasetId, rows: 10_000, accepted: 9_990, rejected: 10, created: 9_990, updated: 0, rejects_url: `/v1/private/imports/${key}/rejects` });
  t.equal(done.body.first_rejects[0].row, 8, 'the first refused row is data row 8');
  t.equal(done.body.first_rejects[0].field, 'email');

  t.ok(seen.length >= 10, `polled while it ran (${seen.length} answers)`);
  const reading = seen.filter((s) => s.status === 'reading');
  t.ok(reading.length >= 5, 'seen reading');
  t.ok(reading.some((s) => s.percent! > 0 && s.percent! < 100), 'a percent between 0 and 100 was seen');
  for (let i = 1; i < seen.length; i++) t.ok(seen[i]!.bytes_read >= seen[i - 1]!.bytes_read, 'the bytes read never go back');
  const final = await call(admin, 'GET', `/v1/private/imports/${key}`);
  t.match(final.body, { status: 'done', percent: 100, bytes_read: Buffer.byteLength(csv), bytes_total: Buffer.byteLength(csv), kind: 'dataset_import', target_id: datasetId });
  t.same(final.body.summary, done.body, 'the progress holds the summary the POST answered');
  t.equal((await call(viewer, 'GET', `/v1/private/imports/${key}`)).status, 403, "a viewer does not see an import's progress");
  t.equal((await call(ownerOfB, 'GET', `/v1/private/imports/${key}`, undefined, b.slug)).body.code, 'import_not_found', "another instance's import key: 404");

  const rejects = await fetch(`${url}/v1/private/imports/${key}/rejects`, { headers: panelHeaders(admin, a.slug) });
  t.equal(rejects.status, 200);
  t.match(rejects.headers.get('content-type'), /^text\/csv/);
  t.match(rejects.headers.get('content-disposition'), /attachment/);
  const lines = (await rejects.text()).trim().split('\n');
  t.equal(lines[0], 'row,code,field,rule,detail,email,first_name,town,ignored', "the header: the reason's columns, then the file's");
  t.equal(lines.length, 11, 'then one line per refused row');
  t.match(lines[1], /^8,field_value_invalid,email,/);
  t.ok(lines[1]!.includes(formulaGuard('=SUM(A1)')), `the formula cell guarded: ${lines[1]}`);
  t.notOk(/,=SUM/.test(lines[1]!), 'no cell starts with =');

  // Browsing and searching: the panel's answers are the public API's.
  for (const q of ['', '?page_size=5&page=3', '?column=city&value=Lima&page_size=3', '?identifier=person42@example.org', '?identifier=PERSON4200&identifier_operator=starts_with']) {
    const panel = await call(viewer, 'GET', `/v1/private/datasets/${datasetId}/records${q}`);
    t.equal(panel.status, 200, q);
    t.same(panel.body, (await publicCall('GET', `/v1/datasets/${datasetId}/records${q}`)).body, `records${q} equals the public API`);
  }
  const one = await call(viewer, 'GET', `/v1/private/datasets/${datasetId}/records?identifier=person42@example.org`);
  t.match(one.body.data, [{ identifier: 'person42@example.org', values: { first_name: 'Name 42', city: 'Madrid' } }]);
  const undeclared = await call(viewer, 'GET', `/v1/private/datasets/${datasetId}/records?column=phone&value=1`);
  t.equal(undeclared.status, 409);
  const { trace_id: _p, ...panelRefusal } = undeclared.body;
  const { trace_id: _q, ...publicRefusal } = (await publicCall('GET', `/v1/datasets/${datasetId}/records?column=phone&value=1`)).body;
  t.same(panelRefusal, publicRefusal, 'its refusal is the public one');

  // A file the mapping cannot satisfy, and a file that is not CSV.
  const noIdentity = await sendCsv(admin, `/v1/private/datasets/${datasetId}/imports`, 'first_name\nAna\n');
  t.equal(noIdentity.status, 409);
  t.equal(noIdentity.body.code, 'dataset_identity_value_missing');
  const unknownMap = await sendCsv(admin, `/v1/private/datasets/${datasetId}/imports?map=${encodeURIComponent('{"nope":"email"}')}`, 'email\na@example.org\n');
  t.equal(unknownMap.body.code, 'dataset_import_column_not_found');
  const json = await fetch(`${url}/v1/private/datasets/${datasetId}/imports`, { method: 'POST', headers: { ...panelHeaders(admin, a.slug), 'content-type': 'application/json' }, body: '{}' });
  t.equal(json.status, 415, 'a JSON body: 415');
  t.equal((await sendCsv(admin, `/v1/private/datasets/99999999/imports`, 'email\n')).status, 404, 'no such dataset: 404');

  // A contact added by hand: the mirrored POST, for an admin.
  t.equal((await call(viewer, 'POST', `/v1/private/datasets/${datasetId}/contacts`, { values: { email: 'hand@example.org' } })).status, 403);
  const added = await call(admin, 'POST', `/v1/private/datasets/${datasetId}/contacts`, { values: { email: 'hand@example.org', age: 30 } });
  t.equal(added.status, 201, JSON.stringify(added.body));
});

t.test('CSV lists: create, upload append and overwrite, show, delete', async (t) => {
  t.equal((await call(viewer, 'POST', '/v1/private/lists', { name: 'VIP' })).status, 403);
  const made = await call(admin, 'POST', '/v1/private/lists', { name: 'VIP', columns: [{ key: 'email', position: 1 }, { key: 'first_name', position: 2 }] });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.equal((await call(admin, 'POST', '/v1/private/lists', { name: 'vip' })).body.code, 'list_name_taken');
  t.equal((await call(admin, 'POST', '/v1/private/lists', { name: 'Other', columns: [{ key: 'nope', position: 1 }] })).body.code, 'list_field_not_found');
  const id = made.body.id as number;
  const first = await sendCsv(admin, `/v1/private/lists/${id}/uploads?mode=append&header=true&key=list-up-1`, 'email,name\na@example.org,Ana\nnot-an-email,Bo\n');
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.match(first.body, { rows: 2, accepted: 1, rejected: 1, rejects_url: '/v1/private/imports/list-up-1/rejects' });
  t.equal((await sendCsv(admin, `/v1/private/lists/${id}/uploads?mode=append&header=true`, 'email,name\na@example.org,Ana\nnot-an-email,Bo\n')).body.code, 'list_import_duplicated', 'the same file twice');
  const second = await sendCsv(admin, `/v1/private/lists/${id}/uploads?mode=append`, 'c@example.org,Cy\n');
  t.equal(second.body.list.rows, 2, 'appended');
  const over = await sendCsv(admin, `/v1/private/lists/${id}/uploads?mode=overwrite`, 'd@example.org,Di\ne@example.org,Ed\nf@example.org,Fa\n');
  t.equal(over.body.list.rows, 3, 'overwritten');
  const shown = await call(viewer, 'GET', `/v1/private/lists/${id}`);
  t.equal(shown.body.rows, 3);
  t.equal(shown.body.uploads.length, 1, 'the overwrite is the one live upload');
  t.same((await call(viewer, 'GET', '/v1/private/lists')).body.data.map((l: { id: number }) => l.id), [id], 'the listing');
  t.equal((await call(ownerOfB, 'GET', `/v1/private/lists/${id}`, undefined, b.slug)).body.code, 'list_not_found', "another instance's list: 404");
  t.equal((await call(viewer, 'DELETE', `/v1/private/lists/${id}`)).status, 403);
  t.equal((await call(admin, 'DELETE', `/v1/private/lists/${id}`)).body.id, id);
  t.equal((await call(viewer, 'GET', `/v1/private/lists/${id}`)).status, 404, 'deleted');
});
