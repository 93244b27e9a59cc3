import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { templateSchema } from '../api/schemas/templates.js';
import { compile } from '../domain/validation.js';
import { cliTest, failed } from './helpers/cli-test.js';
import { corpusPath } from './helpers/corpus.js';
import { oneJsonObject } from './helpers/spawn.js';

/**
 * The panel-only template operations as a user runs them (`node bin/cartero.js template ...`, in
 * this process but for the first: test/helpers/cli-test.ts) against this file's database, their
 * effects checked over HTTP on the real web app.
 */

const { dbs, cli, binary, a, b, dir, file, call, ok } = await cliTest(t, 'templatescli', ['templates:read', 'templates:write']);
const template = compile(templateSchema, 'json');

const CORPUS = corpusPath('templates', 'beefree', 'samples');
const skeleton = (await call('GET', '/v1/mail-templates/format')).body.skeleton;

t.test('import: a native draft from a Beefree document file, printed as GET shows it', async (t) => {
  const path = join(CORPUS, 'examples-sample.json');
  // Through `node bin/cartero.js` itself, once: the other commands of this file run in process (test/helpers/spawn.ts's cliRunner).
  const imported = oneJsonObject(await binary('template', 'import', '--instance', a.slug, '--name', 'Sample', '--file', path));
  template(imported);
  t.match(imported, { name: 'Sample', status: 'draft', provider: 'native' });
  t.same(imported.config, JSON.parse(readFileSync(path, 'utf8')), 'the file document, unchanged');
  t.type(imported.html, 'string');
  t.ok(imported.findings.some((f: any) => f.level === 'warning'), 'its quirks are warnings (a button without a link)');
  const got = await call('GET', `/v1/mail-templates/${imported.id}`);
  t.same(got.body, imported, 'what GET shows');
  t.equal((await call('PATCH', `/v1/mail-templates/${imported.id}`, { subject: 'Editable' })).status, 200, 'a native draft is editable');

  failed(t, await cli('template', 'import', '--instance', a.slug, '--name', 'SAMPLE', '--file', path), /template_name_taken/, 'a taken name');
  failed(t, await cli('template', 'import', '--instance', a.slug, '--name', 'Broken', '--file', file('broken.json', '{"page": ')), /invalid_document: .*not JSON/, 'not JSON');
  const invalid = { ...skeleton, page: { ...skeleton.page, rows: 'not an array' } };
  const r = await cli('template', 'import', '--instance', a.slug, '--name', 'Invalid', '--file', file('invalid.json', JSON.stringify(invalid)));
  failed(t, r, /invalid_document/, 'an invalid document');
  t.match(r.stderr, /\/config\/page\/rows: invalid_document: .*\[rule \w+/, 'each refused node by pointer and rule');
  failed(t, await cli('template', 'import', '--instance', a.slug, '--name', 'Missing', '--file', join(dir, 'nope.json')), /ENOENT/, 'a missing file');
  failed(t, await cli('template', 'import', '--instance', 'no-such-instance', '--name', 'X', '--file', path), /instance/, 'an unknown instance');
  const count = Number((await dbs.pool.query("SELECT count(*) AS n FROM mail_templates WHERE name IN ('Broken', 'Invalid', 'Missing', 'X')")).rows[0].n);
  t.equal(count, 0, 'nothing stored for a refused import');
});

t.test('publish, unpublish, delete: print the template; published is not editable; deleted is gone and its name free', async (t) => {
  const created = (await call('POST', '/v1/mail-templates', { name: 'Cycle', config: skeleton })).body;
  const published = await ok('template', 'publish', '--instance', a.slug, '--id', String(created.id));
  template(published);
  t.match(published, { id: created.id, status: 'public' });
  t.same(await ok('template', 'publish', '--instance', a.slug, '--id', String(created.id)), published, 'publishing again changes nothing');
  t.equal((await call('PATCH', `/v1/mail-templates/${created.id}`, { subject: 'x' })).body.code, 'template_published');

  const draft = await ok('template', 'unpublish', '--instance', a.slug, '--id', String(created.id));
  t.match(draft, { id: created.id, status: 'draft' });
  t.equal((await call('PATCH', `/v1/mail-templates/${created.id}`, { subject: 'x' })).status, 200);

  failed(t, await cli('template', 'publish', '--instance', b.slug, '--id', String(created.id)), /mail_template_not_found/, "another instance's id");
  failed(t, await cli('template', 'publish', '--instance', a.slug, '--id', 'abc'), /--id must be a positive integer/, 'a bad id');

  const empty = (await call('POST', '/v1/mail-templates', { name: 'Empty', config: null })).body;
  failed(t, await cli('template', 'publish', '--instance', a.slug, '--id', String(empty.id)), /template_has_no_html/, 'nothing to send');

  const deleted = await ok('template', 'delete', '--instance', a.slug, '--id', String(created.id));
  t.match(deleted, { id: created.id, name: 'Cycle' });
  t.equal((await call('GET', `/v1/mail-templates/${created.id}`)).status, 404);
  failed(t, await cli('template', 'delete', '--instance', a.slug, '--id', String(created.id)), /mail_template_not_found/, 'deleted twice');
  t.equal((await call('POST', '/v1/mail-templates', { name: 'CYCLE', config: skeleton })).status, 201, 'the name is free');
});

t.test('import-external: listable, publishable, never editable', async (t) => {
  const html = '<!doctype html><html><body><p>Hola {{first_name}}</p><a href="https://old.example/x">Old</a></body></html>';
  const imported = await ok('template', 'import-external', '--instance', a.slug, '--name', 'Legacy', '--html-file', file('legacy.html', html));
  template(imported);
  t.match(imported, { name: 'Legacy', provider: 'external', status: 'draft', html, config: null, subject: null, preheader: null });
  const listed = (await call('GET', '/v1/mail-templates?page_size=100')).body.data.find((x: any) => x.id === imported.id);
  t.match(listed, { provider: 'external' });
  const patched = await call('PATCH', `/v1/mail-templates/${imported.id}`, { name: 'New name' });
  t.equal(patched.status, 409);
  t.equal(patched.body.code, 'template_read_only');
  t.match(await ok('template', 'publish', '--instance', a.slug, '--id', String(imported.id)), { status: 'public', provider: 'external' });
  t.equal((await call('PATCH', `/v1/mail-templates/${imported.id}`, { subject: 'x' })).body.code, 'template_read_only', 'published or not');
  failed(t, await cli('template', 'import-external', '--instance', a.slug, '--name', 'legacy', '--html-file', file('other.html', '<p>x</p>')), /template_name_taken/, 'a taken name');
});

t.test('help lists the template commands', async (t) => {
  const help = await cli('--help');
  t.equal(help.code, 0);
  for (const action of ['publish', 'unpublish', 'delete', 'import-external', 'import']) t.match(help.stdout, `template ${action}`);
});
