import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { collectionSchema } from '../api/schemas/common.js';
import { templateSchema, templateSummarySchema, templateValidationSchema } from '../api/schemas/templates.js';
import { compile } from '../domain/validation.js';
import { deleteTemplate, importExternalTemplate, setTemplateStatus } from '../domain/templates/templates.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall, type JsonReply } from './helpers/http.js';
import { startTestWeb } from './helpers/web.js';
import { corpusPath } from './helpers/corpus.js';

/**
 * The mail template resource over HTTP on the real app: create, read, list, PATCH with every rule
 * of the spec, validate, the format description, against this file's own Postgres. Publishing,
 * unpublishing, deleting and external imports are panel operations: made here with the domain
 * functions the CLI calls (test/templates-cli.test.ts runs the CLI itself).
 */

const dbs = await testDatabases(t, 'templatesapi');
const { url } = await startTestWeb(t, dbs);
const scopes = ['templates:read', 'templates:write'];
const a = await makeTenant(dbs.pool, { scopes });
const b = await makeTenant(dbs.pool, { scopes });
// Scopes on every route, and another instance's id on PATCH: test/route-security.test.ts.

const template = compile(templateSchema, 'json');
const summaryPage = compile(collectionSchema(templateSummarySchema), 'json');
const validation = compile(templateValidationSchema, 'json');

type Reply = JsonReply;

const call = (method: string, path: string, body?: unknown, headers = a.headers): Promise<Reply> => jsonCall(url, method, path, body, headers);

const CORPUS = corpusPath('templates', 'beefree', 'samples');
const corpusDoc = (file: string): any => JSON.parse(readFileSync(join(CORPUS, file), 'utf8'));

// The skeleton of the published format: a complete, valid document without warnings.
const format = (await call('GET', '/v1/mail-templates/format?lang=en')).body;
const skeleton = (): any => structuredClone(format.skeleton);

let seq = 0;
const uniqueName = (base = 'Template') => `${base} ${++seq}`;

async function create(over: Record<string, unknown> = {}, headers = a.headers): Promise<any> {
  const r = await call('POST', '/v1/mail-templates', { name: uniqueName(), config: skeleton(), ...over }, headers);
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const patch = (id: number, body: unknown, headers = a.headers) => call('PATCH', `/v1/mail-templates/${id}`, body, headers);
const count = async () => Number((await dbs.pool.query('SELECT count(*) AS n FROM mail_templates')).rows[0].n);

function problem(t: Test, r: Reply, status: number, code: string): void {
  t.equal(r.status, status, `${status} ${code}`);
  t.equal(r.body?.code, code);
  t.match(r.headers.get('content-type'), /application\/problem\+json/);
}

t.test('create: 201, a native draft with html and findings; read back unchanged; listed without html and config', async (t) => {
  const config = skeleton();
  const r = await call('POST', '/v1/mail-templates', { name: 'Welcome', subject: 'Hi {{first_name}}', preheader: 'Your week', description: 'd', config });
  t.equal(r.status, 201);
  template(r.body);
  t.match(r.body, { name: 'Welcome', subject: 'Hi {{first_name}}', preheader: 'Your week', description: 'd', status: 'draft', provider: 'native' });
  t.same(r.body.config, config, 'config as sent');
  t.type(r.body.html, 'string');
  t.ok(r.body.html.includes('Your week'), 'the preheader is in the html');
  t.same(r.body.findings, [], 'the skeleton with subject and preheader has no finding');
  t.equal(r.body.created_at, r.body.updated_at);

  const got = await call('GET', `/v1/mail-templates/${r.body.id}`);
  t.equal(got.status, 200);
  template(got.body);
  t.same(got.body, r.body, 'a read answers what the create did');

  const list = await call('GET', '/v1/mail-templates?page_size=100');
  t.equal(list.status, 200);
  summaryPage(list.body);
  const row = list.body.data.find((x: any) => x.id === r.body.id);
  t.ok(row);
  t.notOk('html' in row || 'config' in row || 'findings' in row, 'listings carry neither html, config nor findings');

  const other = await call('GET', `/v1/mail-templates/${r.body.id}`, undefined, b.headers);
  problem(t, other, 404, 'mail_template_not_found');
  t.match(other.body.detail, /mail template \d+ not found/);
  t.notOk((await call('GET', '/v1/mail-templates', undefined, b.headers)).body.data.some((x: any) => x.id === r.body.id), "another instance's listing does not show it");
});

t.test('config is stored as sent: the same JSON value on read, member order and unknown keys kept', async (t) => {
  const config = skeleton();
  // Unknown members (real documents carry these) are kept, in the order sent, wherever they are.
  const sent = { zeta: 1, comments: { a: { text: 'hi' } }, ...config, metadata: { lang: 'es', 'x-y': [1, 2.5, true, null] } };
  const created = await create({ config: sent });
  const got = await call('GET', `/v1/mail-templates/${created.id}`);
  t.equal(JSON.stringify(got.body.config), JSON.stringify(sent), 'same members in the same order');
  const stored = (await dbs.pool.query('SELECT config::text AS c FROM mail_templates WHERE id = $1', [created.id])).rows[0].c;
  t.equal(stored, JSON.stringify(sent), 'the stored text is the compact JSON of what was sent');
});

t.test('names: unique per instance ignoring case and accents; another instance and a deleted template do not count', async (t) => {
  const first = await create({ name: 'Promoción' });
  for (const name of ['PROMOCION', 'promocion', 'Promocíón', 'PROMOCIÓN']) {
    const r = await call('POST', '/v1/mail-templates', { name, config: skeleton() });
    problem(t, r, 409, 'template_name_taken');
  }
  t.equal((await create({ name: 'Promoción' }, b.headers)).name, 'Promoción', 'another instance may use the name');
  const other = await create({ name: 'Otra' });
  problem(t, await patch(other.id, { name: 'PROMOCIÓN' }), 409, 'template_name_taken');
  t.equal((await patch(first.id, { name: 'PROMOCIÓN' })).body.name, 'PROMOCIÓN', 'a template may rename itself to a variant of its own name');

  await deleteTemplate(a.tenant, dbs.pool, first.id);
  problem(t, await call('GET', `/v1/mail-templates/${first.id}`), 404, 'mail_template_not_found');
  problem(t, await patch(first.id, { subject: 'x' }), 404, 'mail_template_not_found');
  const again = await call('POST', '/v1/mail-templates', { name: 'promocion', config: skeleton() });
  t.equal(again.status, 201, "a deleted template's name is free");
  t.notOk((await call('GET', '/v1/mail-templates?page_size=100')).body.data.some((x: any) => x.id === first.id), 'deleted: not listed');

  // The database itself refuses the duplicate: two creates racing each other, one wins.
  const racing = await Promise.all([1, 2, 3, 4].map(() => call('POST', '/v1/mail-templates', { name: 'Carrera', config: skeleton() })));
  t.same(racing.map((r) => r.status).sort(), [201, 409, 409, 409]);
});

t.test('name, subject, preheader and description lengths; name required and never null', async (t) => {
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ name: '' }, '/name', 'string_too_short'],
    [{ name: 'n'.repeat(256) }, '/name', 'string_too_long'],
    [{ name: null }, '/name', 'value_error'],
    [{ subject: 's'.repeat(255) }, '/subject', 'string_too_long'],
    [{ preheader: 'p'.repeat(256) }, '/preheader', 'string_too_long'],
    [{ description: 'd'.repeat(5001) }, '/description', 'string_too_long'],
  ];
  for (const [over, pointer, code] of cases) {
    const r = await call('POST', '/v1/mail-templates', { name: uniqueName(), config: skeleton(), ...over });
    t.equal(r.status, 422, `${pointer} ${code}`);
    t.match(r.body.errors, [{ pointer, code }]);
  }
  const missing = await call('POST', '/v1/mail-templates', { config: skeleton() });
  t.match(missing.body.errors, [{ pointer: '/name', code: 'missing' }]);
  // At the limits (in characters, not bytes): accepted.
  const full = await create({ name: 'ñ'.repeat(255), subject: 'é'.repeat(254), preheader: 'ü'.repeat(255), description: 'ß'.repeat(5000) });
  t.equal([...full.name].length, 255);
});

t.test('PATCH: only the fields present change; null empties (name excepted); read-only fields ignored', async (t) => {
  const start = await create({ name: uniqueName('Patch'), subject: 'S1', preheader: 'P1', description: 'D1' });
  const id = start.id;
  const read = async () => (await call('GET', `/v1/mail-templates/${id}`)).body;

  const name = await patch(id, { name: 'Renamed patch' });
  t.equal(name.status, 200);
  template(name.body);
  t.match(name.body, { name: 'Renamed patch', subject: 'S1', preheader: 'P1', description: 'D1', status: 'draft', provider: 'native' });
  t.equal(name.body.html, start.html, 'a name change leaves html alone');
  t.same(name.body.config, start.config);
  t.ok(name.body.updated_at >= start.updated_at);

  const subject = await patch(id, { subject: 'S2' });
  t.match(subject.body, { name: 'Renamed patch', subject: 'S2', preheader: 'P1', description: 'D1' });
  t.match(subject.body.html, /<title>S2<\/title>/, 'the subject is the html title: a subject change regenerates html');
  t.ok(subject.body.html.includes('P1'), 'with the stored preheader');

  const description = await patch(id, { description: null });
  t.match(description.body, { subject: 'S2', preheader: 'P1', description: null });

  const preheader = await patch(id, { preheader: 'Fresh preheader' });
  t.equal(preheader.body.preheader, 'Fresh preheader');
  t.ok(preheader.body.html.includes('Fresh preheader'), 'a preheader change regenerates html');
  t.notOk(preheader.body.html.includes('P1'));

  const noPreheader = await patch(id, { preheader: null });
  t.equal(noPreheader.body.preheader, null);
  t.notOk(noPreheader.body.html.includes('Fresh preheader'), 'null preheader: gone from html');

  const subjectNull = await patch(id, { subject: null });
  t.equal(subjectNull.body.subject, null);

  // Everything a read returned may be sent back: id, status, provider, html, findings, dates are ignored.
  const current = await read();
  const echoed = await patch(id, { ...current, id: 999999, status: 'public', provider: 'external', html: '<p>injected</p>', created_at: '2000-01-01T00:00:00Z', findings: [{ x: 1 }], name: 'Echoed' });
  t.equal(echoed.status, 200);
  t.match(echoed.body, { id, status: 'draft', provider: 'native', created_at: start.created_at, name: 'Echoed' });
  t.notOk(echoed.body.html.includes('injected'), 'html in a body is never stored');
  const stored = (await dbs.pool.query('SELECT html FROM mail_templates WHERE id = $1', [id])).rows[0].html;
  t.notOk(stored.includes('injected'));

  const nullName = await patch(id, { name: null });
  t.equal(nullName.status, 422);
  t.match(nullName.body.errors, [{ pointer: '/name', code: 'value_error' }]);
  t.equal((await read()).name, 'Echoed', 'the refused PATCH changed nothing');

  const empty = await patch(id, {});
  t.equal(empty.status, 200, 'an empty PATCH changes nothing and answers the template');
  t.equal(empty.body.name, 'Echoed');

  const noConfig = await patch(id, { config: null });
  t.match(noConfig.body, { config: null, html: null }, 'null config empties design and html');
  const back = await patch(id, { config: skeleton() });
  t.type(back.body.html, 'string', 'a config again: html again');
  t.same(back.body.config, skeleton());

  problem(t, await patch(987654321, { name: 'x' }), 404, 'mail_template_not_found');
  const bad = await call('PATCH', `/v1/mail-templates/${id}`, '{"name":');
  t.equal(bad.status, 400);
});

t.test('PATCH refuses published and external templates (409), whatever the body', async (t) => {
  const published = await create();
  await setTemplateStatus(a.tenant, dbs.pool, published.id, 'public');
  problem(t, await patch(published.id, { subject: 'x' }), 409, 'template_published');
  problem(t, await patch(published.id, {}), 409, 'template_published');
  t.equal((await call('GET', `/v1/mail-templates/${published.id}`)).body.subject, null, 'unchanged');
  await setTemplateStatus(a.tenant, dbs.pool, published.id, 'draft');
  t.equal((await patch(published.id, { subject: 'x' })).status, 200, 'unpublished: editable again');

  const external = await importExternalTemplate(a.tenant, dbs.pool, { name: uniqueName('External'), html: '<html><body><p>Old editor</p></body></html>' });
  t.match(external, { provider: 'external', status: 'draft', config: null, html: '<html><body><p>Old editor</p></body></html>' });
  problem(t, await patch(external.id, { subject: 'x' }), 409, 'template_read_only');
  await setTemplateStatus(a.tenant, dbs.pool, external.id, 'public');
  problem(t, await patch(external.id, { subject: 'x' }), 409, 'template_read_only');
  const listed = (await call('GET', '/v1/mail-templates?page_size=100')).body.data.find((x: any) => x.id === external.id);
  t.match(listed, { provider: 'external', status: 'public' }, 'external templates are listed');
});

t.test('413: a body over the path maximum, and a config over 262144 bytes', async (t) => {
  const target = await create();
  const huge = JSON.stringify({ name: 'x', config: { page: { title: 'x'.repeat(4 * 1024 * 1024) } } });
  for (const [method, path] of [['POST', '/v1/mail-templates'], ['PATCH', `/v1/mail-templates/${target.id}`], ['POST', '/v1/mail-templates/validate']] as const) {
    const r = await call(method, path, huge);
    problem(t, r, 413, 'request_too_large');
    t.equal(r.body.max_bytes, 4 * 1024 * 1024, `${method} ${path}: the path maximum`);
  }
  // 262144 bytes of compact JSON is the limit: one more is 413 with the config's own maximum.
  // Unknown members padding the skeleton to an exact compact size: 20,000 small numbers (which
  // pretty-printing spreads over as many lines) and a string for the rest.
  const sized = (bytes: number) => {
    const config = skeleton();
    config.numbers = new Array(20_000).fill(0);
    config.padding = '';
    config.padding = 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify(config)));
    return config;
  };
  const over = sized(262_145);
  t.equal(Buffer.byteLength(JSON.stringify(over)), 262_145);
  const before = await count();
  for (const [method, path] of [['POST', '/v1/mail-templates'], ['PATCH', `/v1/mail-templates/${target.id}`], ['POST', '/v1/mail-templates/validate']] as const) {
    const r = await call(method, path, { name: uniqueName(), config: over });
    problem(t, r, 413, 'request_too_large');
    t.equal(r.body.max_bytes, 262_144, `${method} ${path}: the config maximum`);
  }
  t.equal(await count(), before, 'nothing created');
  t.same((await call('GET', `/v1/mail-templates/${target.id}`)).body.config, target.config, 'nothing changed');
  const at = await call('POST', '/v1/mail-templates', { name: uniqueName(), config: sized(262_144) });
  t.equal(at.status, 201, 'exactly 262144 bytes is accepted');
  // Whitespace is not counted: the same config pretty-printed is larger on the wire, not stored.
  const pretty = JSON.stringify({ name: uniqueName(), config: sized(262_144) }, null, 2);
  t.ok(Buffer.byteLength(pretty) > 262_144 + 100_000);
  t.equal((await call('POST', '/v1/mail-templates', pretty)).status, 201);
});

const T = 'mailup-bee-newsletter-modules-';

/** The skeleton plus one row (uuid row-x) of one column (uuid col-x) holding these modules. */
function withModules(modules: unknown[]): any {
  const doc = skeleton();
  doc.page.rows.push({ uuid: 'row-x', columns: [{ uuid: 'col-x', 'grid-columns': 12, modules }] });
  return doc;
}

t.test('422 document errors: one errors[] item per error, pointer into the body, params.rule and params.uuid', async (t) => {
  const at = `/config/page/rows/${skeleton().page.rows.length}/columns/0/modules`;
  const cases: Array<{ what: string; config: unknown; errors: unknown[] }> = [
    {
      what: 'rows not an array',
      config: { page: { ...skeleton().page, rows: 'none' } },
      errors: [{ pointer: '/config/page/rows', code: 'invalid_document', params: { rule: 'invalid_type', uuid: null } }],
    },
    {
      what: 'a descriptor that is not an object, in a module with a uuid',
      config: withModules([{ uuid: 'mod-1', type: `${T}paragraph`, descriptor: 'text' }]),
      errors: [{ pointer: `${at}/0/descriptor`, code: 'invalid_document', params: { rule: 'invalid_type', uuid: 'mod-1' } }],
    },
    {
      what: 'a module without a uuid: the nearest one is its column',
      config: withModules([{ type: 'not-a-module-type', descriptor: {} }]),
      errors: [{ pointer: `${at}/0/type`, code: 'invalid_document', params: { rule: 'module_type_invalid', uuid: 'col-x' } }],
    },
    {
      what: 'two errors: a javascript: link and a data: image',
      config: withModules([
        { uuid: 'btn', type: `${T}button`, descriptor: { button: { label: 'Go', href: 'javascript:alert(1)' } } },
        { uuid: 'img', type: `${T}image`, descriptor: { image: { src: 'data:image/png;base64,AAAA', alt: 'x', href: '' } } },
      ]),
      errors: [
        { pointer: `${at}/0/descriptor/button/href`, code: 'invalid_document', params: { rule: 'unsafe_link', uuid: 'btn' } },
        { pointer: `${at}/1/descriptor/image/src`, code: 'invalid_document', params: { rule: 'unsafe_link', uuid: 'img' } },
      ],
    },
    {
      what: 'a Beefree kind Cartero does not render',
      config: withModules([{ uuid: 'frm', type: `${T}form`, descriptor: { form: {} } }]),
      errors: [{ code: 'essential_not_supported', params: { rule: 'module_not_supported', uuid: 'frm', kinds: /form/ } }],
    },
    {
      // Its floor (check/html-estimate.ts) is under the maximum: rendered, then measured.
      what: 'a document whose html is over the maximum',
      config: { page: { rows: Array.from({ length: 320 }, (_, i) => ({ uuid: `r${i}`, columns: [{ 'grid-columns': 12, modules: [] }] })) } },
      errors: [{ pointer: '/config', code: 'template_html_too_large', params: { rule: 'html_too_large', uuid: null, max_bytes: 524288 } }],
    },
    {
      what: 'a document whose html cannot fit the maximum by its shape (refused before rendering)',
      config: { page: { rows: Array.from({ length: 400 }, (_, i) => ({ uuid: `r${i}`, columns: [{ 'grid-columns': 12, modules: [] }] })) } },
      errors: [
        {
          pointer: '/config/page/rows',
          code: 'template_html_too_large',
          params: { rule: 'html_estimate_too_large', uuid: null, max_bytes: 524288, estimated_min_bytes: 601400, rows: 400, columns: 400, modules: 0 },
        },
      ],
    },
  ];
  const target = await create();
  const before = await count();
  for (const c of cases) {
    for (const [method, path] of [['POST', '/v1/mail-templates'], ['PATCH', `/v1/mail-templates/${target.id}`], ['POST', '/v1/mail-templates/validate']] as const) {
      const r = await call(method, path, { name: uniqueName(), config: c.config });
      t.equal(r.status, 422, `${c.what}: ${method} ${path}`);
      t.equal(r.body.code, 'validation_error');
      t.equal(r.body.errors.length, c.errors.length, 'one item per error');
      t.match(r.body.errors, c.errors);
      for (const e of r.body.errors) {
        t.type(e.message, 'string');
        for (const v of Object.values(e.params)) t.ok(v === null || typeof v !== 'object', 'params are scalars (non-scalars as text)');
      }
    }
  }
  t.equal(await count(), before, 'nothing created');
  t.same((await call('GET', `/v1/mail-templates/${target.id}`)).body, target, 'nothing changed');
});

t.test('warnings and suggestions are stored and returned, never blocking', async (t) => {
  const config = withModules([
    { uuid: 'img-1', type: `${T}image`, descriptor: { image: { src: 'https://cdn.example/a.png', href: '', width: '600px' } } },
    { uuid: 'img-1', type: `${T}button`, descriptor: { button: { label: 'Go', href: '' } } },
  ]);
  const created = await call('POST', '/v1/mail-templates', { name: uniqueName(), config });
  t.equal(created.status, 201, 'warnings do not block');
  const rules = created.body.findings.map((f: any) => `${f.level}:${f.rule}:${f.uuid}`);
  for (const want of ['warning:image_missing_alt:img-1', 'warning:duplicate_uuid:img-1', 'warning:link_missing:img-1', 'suggestion:subject_missing:null', 'suggestion:preheader_missing:null']) {
    t.ok(rules.includes(want), want);
  }
  t.ok(created.body.findings.every((f: any) => f.level !== 'error'));
  t.same((await call('GET', `/v1/mail-templates/${created.body.id}`)).body.findings, created.body.findings, 'stored with the template');
  const fixed = await patch(created.body.id, { subject: 'Now with a subject' });
  t.notOk(fixed.body.findings.some((f: any) => f.rule === 'subject_missing'), 'a subject PATCH refreshes the findings');
  t.ok(fixed.body.findings.some((f: any) => f.rule === 'image_missing_alt'), 'the document warnings stay');
});

t.test('every module kind round-trips create -> read -> render, from its example and from the defaults', async (t) => {
  for (const m of format.modules) {
    const example = (await call('GET', `/v1/mail-templates/format/modules/${m.kind}`)).body.example;
    const fromDefaults = { ...structuredClone(format.defaults.modules[m.kind]), uuid: `default-${m.kind}` };
    const row = { ...structuredClone(format.defaults.row), uuid: `row-${m.kind}` };
    row.columns = [{ ...structuredClone(format.defaults.column), uuid: `col-${m.kind}`, modules: [example, fromDefaults] }];
    const config = skeleton();
    config.page.rows.push(row);
    const r = await call('POST', '/v1/mail-templates', { name: `Kind ${m.kind}`, subject: 's', preheader: 'p', config });
    if (!t.equal(r.status, 201, `${m.kind}: created`)) {
      t.comment(JSON.stringify(r.body));
      continue;
    }
    const got = (await call('GET', `/v1/mail-templates/${r.body.id}`)).body;
    t.equal(JSON.stringify(got.config), JSON.stringify(config), `${m.kind}: config read back unchanged`);
    t.type(got.html, 'string', `${m.kind}: rendered`);
    t.notOk(got.findings.some((f: any) => f.uuid === example.uuid && f.level === 'warning'), `${m.kind}: its example has no warning`);
  }
});

t.test('every corpus document creates (201) and reads back unchanged', async (t) => {
  for (const file of readdirSync(CORPUS).filter((f) => f.endsWith('.json'))) {
    const config = corpusDoc(file);
    const r = await call('POST', '/v1/mail-templates', { name: file, subject: 's', preheader: 'p', config });
    if (!t.equal(r.status, 201, `${file}: created`)) continue;
    const got = await call('GET', `/v1/mail-templates/${r.body.id}`);
    t.same(got.body.config, config, `${file}: config read back unchanged`);
    t.equal(JSON.stringify(got.body.config), JSON.stringify(config), `${file}: member order too`);
    t.type(got.body.html, 'string');
  }
});

t.test('validate: findings and html, nothing stored; the same errors a create gives', async (t) => {
  const before = await count();
  const r = await call('POST', '/v1/mail-templates/validate', { subject: 's', preheader: 'Peek', config: skeleton() });
  t.equal(r.status, 200);
  validation(r.body);
  t.same(r.body.findings, []);
  t.ok(r.body.html.includes('Peek'));
  const missing = await call('POST', '/v1/mail-templates/validate', { config: skeleton() });
  t.ok(missing.body.findings.some((f: any) => f.level === 'suggestion'), 'no subject nor preheader: suggestions');
  t.equal(await count(), before, 'nothing stored');
});

t.test('format: the same for every instance, cacheable (ETag, 304), lang changes only the text', async (t) => {
  const es = await call('GET', '/v1/mail-templates/format');
  t.equal(es.status, 200);
  t.type(es.body.format, 'string');
  for (const key of ['field_types', 'defaults', 'skeleton', 'modules']) t.ok(es.body[key], `has ${key}`);
  t.ok(es.body.field_types.nodes && es.body.field_types.descriptor_by_kind && es.body.field_types.css);
  t.ok(es.body.modules.every((m: any) => m.type === `mailup-bee-newsletter-modules-${m.kind}` && typeof m.content_key === 'string'));
  const etag = es.headers.get('etag');
  t.ok(etag, 'ETag');
  t.match(es.headers.get('cache-control'), /max-age=\d+/);
  const en = await call('GET', '/v1/mail-templates/format?lang=en');
  t.not(en.body.format, es.body.format, 'the text is in the language asked');
  t.same({ ...en.body, format: '' }, { ...es.body, format: '' }, 'everything else is identical');
  t.not(en.headers.get('etag'), etag, 'each language has its own ETag');
  const explicit = await call('GET', '/v1/mail-templates/format?lang=es');
  t.equal(explicit.headers.get('etag'), etag, 'es is the default');
  const other = await call('GET', '/v1/mail-templates/format', undefined, b.headers);
  t.same(other.body, es.body, 'identical for every instance');

  const cached = await fetch(`${url}/v1/mail-templates/format`, { headers: { ...a.headers, 'if-none-match': etag! } });
  t.equal(cached.status, 304, 'If-None-Match: 304');
  t.equal(await cached.text(), '');
  const stale = await fetch(`${url}/v1/mail-templates/format`, { headers: { ...a.headers, 'if-none-match': '"stale"' } });
  t.equal(stale.status, 200);
  await stale.text();

  const fr = await call('GET', '/v1/mail-templates/format?lang=fr');
  t.equal(fr.status, 422);
  t.match(fr.body.errors, [{ pointer: '/lang', code: 'literal_error' }]);
});

t.test('module detail: one kind in detail; an unknown kind is a 404 problem', async (t) => {
  for (const m of format.modules) {
    const r = await call('GET', `/v1/mail-templates/format/modules/${m.kind}`);
    t.equal(r.status, 200, m.kind);
    t.match(r.body, { kind: m.kind, type: m.type, content_key: m.content_key });
  }
  const unknown = await call('GET', '/v1/mail-templates/format/modules/hologram');
  problem(t, unknown, 404, 'template_module_not_found');
  t.equal(unknown.body.detail, 'template module hologram not found');
  t.type(unknown.body.trace_id, 'string');
});

t.test('two PATCHes at once do not lose each other\'s fields; html follows the final config and preheader', async (t) => {
  for (let round = 0; round < 5; round++) {
    const target = await create({ preheader: 'start' });
    const [x, y, z] = await Promise.all([
      patch(target.id, { name: `Concurrent ${round}` }),
      patch(target.id, { subject: `Subject ${round}` }),
      patch(target.id, { preheader: `Preheader ${round}` }),
    ]);
    t.same([x.status, y.status, z.status], [200, 200, 200]);
    const end = (await call('GET', `/v1/mail-templates/${target.id}`)).body;
    t.match(end, { name: `Concurrent ${round}`, subject: `Subject ${round}`, preheader: `Preheader ${round}` }, `round ${round}: every field kept`);
    t.ok(end.html.includes(`Preheader ${round}`), 'html carries the stored preheader');
  }
});

t.test('TEMPLATE_EDITOR=off: creating, validating and changing a design are 409 template_editor_unavailable', async (t) => {
  const off = await startTestWeb(t, dbs, { env: { TEMPLATE_EDITOR: 'off' } });
  const offCall = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(off.url + path, { method, headers: { ...a.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const draft = await create();
  const before = await count();
  problem(t, await offCall('POST', '/v1/mail-templates', { name: uniqueName(), config: skeleton() }), 409, 'template_editor_unavailable');
  problem(t, await offCall('POST', '/v1/mail-templates/validate', { config: skeleton() }), 409, 'template_editor_unavailable');
  problem(t, await offCall('PATCH', `/v1/mail-templates/${draft.id}`, { config: skeleton() }), 409, 'template_editor_unavailable');
  problem(t, await offCall('PATCH', `/v1/mail-templates/${draft.id}`, { preheader: 'x' }), 409, 'template_editor_unavailable');
  t.equal(await count(), before);
  const renamed = await offCall('PATCH', `/v1/mail-templates/${draft.id}`, { name: uniqueName('Off'), subject: 'still editable' });
  t.equal(renamed.status, 200, 'name and subject still change');
  t.equal(renamed.body.html, draft.html);
  t.equal((await offCall('GET', `/v1/mail-templates/${draft.id}`)).status, 200, 'reads work');
});

t.test('web fonts whose URLs hold &, ;, \' and ) create, validate and PATCH without a 500 (issue 24)', async (t) => {
  const config = skeleton();
  config.page.body.webFonts = [
    { name: 'Roboto', fontFamily: "'Roboto', sans-serif", url: 'https://fonts.googleapis.com/css2?family=Roboto:ital,wght@0,400;0,700&display=swap' },
    { name: 'Lato', fontFamily: "'Lato', sans-serif", url: "https://fonts.googleapis.com/css?family=Lato:400,700&subset=latin-ext;x=1&q='q'&p=(p)" },
  ];
  config.page.body.content.style['font-family'] = "'Roboto', 'Lato', Arial, sans-serif";
  config.page.rows[0].columns[0].modules = [{ ...structuredClone(format.defaults.modules.paragraph), uuid: 'p-fonts' }];
  const created = await call('POST', '/v1/mail-templates', { name: uniqueName('Fonts'), subject: 's', preheader: 'p', config });
  t.equal(created.status, 201);
  template(created.body);
  t.match(created.body.html, '@import url("https://fonts.googleapis.com/css2?family=Roboto:ital,wght@0,400;0,700&display=swap");');
  t.match(created.body.html, `@import url("https://fonts.googleapis.com/css?family=Lato:400,700&subset=latin-ext;x=1&q='q'&p=(p)");`);
  t.notOk(created.body.findings.some((f: any) => f.rule === 'check_failed'), 'every check ran');
  t.ok(created.body.findings.some((f: any) => f.rule === 'css_client_support' && f.params.feature === '@import'), 'the Can I email check read the @import');
  const validated = await call('POST', '/v1/mail-templates/validate', { subject: 's', preheader: 'p', config });
  t.equal(validated.status, 200);
  t.same(validated.body.findings, created.body.findings);
  const patched = await patch(created.body.id, { config, preheader: 'again' });
  t.equal(patched.status, 200);
});

t.test('an optional check that throws is skipped and reported (check_failed), never a 500', async (t) => {
  // CSS the Can I email checker's parser cannot read (an unclosed rule) inside an html module:
  // @jsx-email/doiuse-email throws on it.
  const config = skeleton();
  config.page.rows[0].columns[0].modules = [
    { ...structuredClone(format.defaults.modules.html), uuid: 'h-css', descriptor: { ...structuredClone(format.defaults.modules.html.descriptor), html: { html: '<style>p { color: red</style><p>Styled</p>' } } },
  ];
  const failed = { level: 'warning', rule: 'check_failed', uuid: null, pointer: '', params: { check: 'css_client_support' } };
  const created = await call('POST', '/v1/mail-templates', { name: uniqueName('Broken CSS'), subject: 's', preheader: 'p', config });
  t.equal(created.status, 201);
  template(created.body);
  t.match(created.body.findings, [failed]);
  t.match(created.body.findings[0].message, /css_client_support check could not run/);
  t.match(created.body.html, 'Styled', 'the template is stored with its html');
  const got = await call('GET', `/v1/mail-templates/${created.body.id}`);
  t.match(got.body.findings, [failed], 'stored with the template');
  const validated = await call('POST', '/v1/mail-templates/validate', { subject: 's', preheader: 'p', config });
  t.equal(validated.status, 200);
  t.match(validated.body.findings, [failed]);
  t.equal((await patch(created.body.id, { preheader: 'other', config })).status, 200);
});
