import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { importExternalTemplate } from '../domain/templates/templates.js';
import { corpusPath } from './helpers/corpus.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { startSendStack, storedOne, waitFor, readMailbox } from './helpers/send-stack.js';

/**
 * The templates of the panel's /v1/private API (issue 31, docs/panel.md "Templates"): the public
 * /v1/mail-templates routes mirrored behind a member's session, and the panel's own publish,
 * unpublish, copy, delete and test send. Against the real web app, Postgres, a worker dyno as its
 * own process and the mailbox simulator: each role's rights, the spec's 409s, the mirrored reads
 * equal to the public API's, a test send arriving in the member's mailbox from the sandbox sender
 * and refused for anyone else, another instance's ids 404.
 */

const stack = await startSendStack(t, { label: 'paneltemplates', publicUrl: 'https://links.paneltemplates.test' });
const { dbs, url, mailboxDir } = stack;
stack.spawnWorker();

const a = await makeTenant(dbs.pool, { scopes: ['templates:read', 'templates:write', 'mail:read'] });
const b = await makeTenant(dbs.pool);
const users = await Promise.all((['owner', 'admin', 'viewer'] as const).map(async (role) => makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role }])));
const [owner, admin, viewer] = await Promise.all(users.map((u) => panelLogin(url, u)));
const viewerEmail = users[2]!.email;
const ownerOfB = await panelLogin(url, await makePanelUser(dbs.pool, [{ instanceId: b.tenant.instanceId, role: 'owner' }]));
const call = (token: string, method: string, path: string, body?: unknown, slug = a.slug) => jsonCall(url, method, path, body, panelHeaders(token, slug));
const pub = (method: string, path: string, body?: unknown) => jsonCall(url, method, path, body, a.headers);

const T = '/v1/private/mail-templates';
const format = (await call(viewer, 'GET', `${T}/format`)).body;
const paragraph = (await call(viewer, 'GET', `${T}/format/modules/paragraph`)).body.example;
/** The skeleton with one paragraph saying `text`. */
const withText = (text: string) => {
  const doc = structuredClone(format.skeleton);
  doc.page.rows[0].columns[0].modules = [{ ...structuredClone(paragraph), descriptor: { ...paragraph.descriptor, paragraph: { ...paragraph.descriptor.paragraph, html: `<p>${text}</p>` } } }];
  return doc;
};

t.test('roles: any member reads, an admin or owner writes; the mirrored reads are the public API’s', async (t) => {
  t.equal((await call(viewer, 'POST', T, { name: 'No', config: format.skeleton })).status, 403, 'a viewer cannot create');
  t.equal((await call(viewer, 'POST', `${T}/validate`, { config: format.skeleton })).status, 403, 'nor validate');
  const created = await call(admin, 'POST', T, { name: 'Welcome', subject: 'Hello', config: withText('First words') });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.equal(created.headers.get('cache-control'), 'no-store', 'a member’s view, kept by no cache');
  t.match(created.body.html, /First words/);
  const id = created.body.id as number;

  for (const path of [T, `${T}/${id}`, `${T}/format/modules/paragraph`]) {
    const panel = await call(viewer, 'GET', path);
    t.equal(panel.status, 200, `${path}: a viewer reads`);
    t.same(panel.body, (await pub('GET', path.replace('/v1/private/', '/v1/'))).body, `${path}: what the public API answers`);
  }
  t.same(format, (await pub('GET', '/v1/mail-templates/format')).body, 'the format too');
  t.equal((await call(viewer, 'GET', `${T}/format/modules/nope`)).body.code, 'template_module_not_found');

  const validated = await call(owner, 'POST', `${T}/validate`, { config: withText('Checked') });
  t.equal(validated.status, 200);
  t.match(validated.body.html, /Checked/, 'validate renders');
  const invalid = { ...format.skeleton, page: { ...format.skeleton.page, rows: 'no' } };
  const refused = await call(admin, 'PATCH', `${T}/${id}`, { config: invalid });
  t.equal(refused.status, 422, 'an invalid document: the public 422');
  t.match(refused.body.errors[0].pointer, /^\/config\/page\/rows/, 'with its pointer');

  for (const [method, path, body] of [
    ['PATCH', `${T}/${id}`, { subject: 'x' }],
    ['POST', `${T}/${id}/publish`, undefined],
    ['POST', `${T}/${id}/unpublish`, undefined],
    ['POST', `${T}/${id}/copy`, { name: 'Copy' }],
    ['POST', `${T}/${id}/test-send`, { to: viewerEmail }],
    ['DELETE', `${T}/${id}`, undefined],
  ] as const) {
    const r = await call(viewer, method, path, body);
    t.equal(r.status, 403, `${method} ${path}: a viewer is refused`);
    t.equal(r.body.code, 'forbidden');
  }
});

t.test('publish, unpublish, copy, delete, and their 409s', async (t) => {
  const created = (await call(admin, 'POST', T, { name: 'Cycle', subject: 'Cycle', config: withText('Cycle text') })).body;
  const id = created.id as number;
  t.equal((await call(admin, 'POST', T, { name: 'CYCLE', config: format.skeleton })).body.code, 'template_name_taken', 'names ignore case');

  const published = await call(admin, 'POST', `${T}/${id}/publish`);
  t.equal(published.status, 200);
  t.equal(published.body.status, 'public');
  t.equal((await pub('GET', `/v1/mail-templates/${id}`)).body.status, 'public', 'the public API sees it published');
  const locked = await call(admin, 'PATCH', `${T}/${id}`, { subject: 'changed' });
  t.equal(locked.status, 409);
  t.equal(locked.body.code, 'template_published', 'a published template is not editable');
  t.same((await call(admin, 'POST', `${T}/${id}/publish`)).body, published.body, 'publishing again changes nothing');
  const draft = await call(owner, 'POST', `${T}/${id}/unpublish`);
  t.equal(draft.body.status, 'draft');
  t.equal((await call(admin, 'PATCH', `${T}/${id}`, { subject: 'changed' })).status, 200, 'editable again');

  const empty = (await call(admin, 'POST', T, { name: 'Empty' })).body;
  const noHtml = await call(admin, 'POST', `${T}/${empty.id}/publish`);
  t.equal(noHtml.status, 409);
  t.equal(noHtml.body.code, 'template_has_no_html');

  const copy = await call(admin, 'POST', `${T}/${id}/copy`, { name: 'Cycle (copy)' });
  t.equal(copy.status, 201, JSON.stringify(copy.body));
  t.not(copy.body.id, id);
  t.match(copy.body, { name: 'Cycle (copy)', subject: 'changed', status: 'draft', provider: 'native', config: draft.body.config });
  t.match(copy.body.html, /Cycle text/);
  t.equal((await call(admin, 'POST', `${T}/${id}/copy`, { name: 'cycle (COPY)' })).body.code, 'template_name_taken');

  const external = await importExternalTemplate(a.tenant, dbs.pool, { name: 'Legacy', html: '<p>Legacy</p>' });
  const readOnly = await call(admin, 'PATCH', `${T}/${external.id}`, { subject: 'x' });
  t.equal(readOnly.status, 409);
  t.equal(readOnly.body.code, 'template_read_only', 'an external template is read-only');
  const externalCopy = await call(admin, 'POST', `${T}/${external.id}/copy`, { name: 'Legacy 2' });
  t.match(externalCopy.body, { provider: 'external', html: '<p>Legacy</p>' }, 'the copy of an external one is external');

  const deleted = await call(admin, 'DELETE', `${T}/${copy.body.id}`);
  t.equal(deleted.status, 200);
  t.equal(deleted.body.id, copy.body.id, 'answers the template as it was');
  t.equal((await call(viewer, 'GET', `${T}/${copy.body.id}`)).body.code, 'mail_template_not_found', 'gone');
  t.equal((await call(admin, 'DELETE', `${T}/${copy.body.id}`)).status, 404, 'deleting again is 404');
  t.equal((await call(admin, 'POST', `${T}/${id}/copy`, { name: 'Cycle (copy)' })).status, 201, 'its name is free again');
});

t.test('a Beefree document from the corpus becomes a template', async (t) => {
  const doc = JSON.parse(readFileSync(join(corpusPath('templates', 'beefree', 'samples'), 'examples-sample.json'), 'utf8'));
  const created = await call(admin, 'POST', T, { name: 'Corpus', config: doc });
  t.equal(created.status, 201);
  t.same(created.body.config, doc, 'the document as the file holds it');
  t.ok(created.body.findings.length > 0, 'its findings');
});

t.test('a test send arrives in a member’s mailbox from the sandbox; a non-member is refused', async (t) => {
  const created = (await call(admin, 'POST', T, { name: 'Trial', subject: 'Trial subject', config: withText('Hello from the test send') })).body;
  const sent = await call(admin, 'POST', `${T}/${created.id}/test-send`, { to: viewerEmail.toUpperCase() });
  t.equal(sent.status, 202, JSON.stringify(sent.body));
  t.equal(sent.body.from, `sandbox@${a.slug}.sandbox.cartero.test`, 'from the instance’s sandbox sender');
  t.equal(sent.body.mails.length, 1);
  t.equal(sent.body.mails[0].to, viewerEmail, 'to the member (a draft: sent as a test_mode send)');
  const mailId = sent.body.mails[0].mail_id as string;
  const status = await waitFor('the test mail sent', async () => {
    const r = await jsonCall(url, 'GET', `/v1/mails/${mailId}`, undefined, a.headers);
    return r.body.status === 3 ? r.body : undefined;
  }, { ms: 60_000, every: 250 });
  t.equal(status.status, 3);
  const stored = await storedOne(t, mailboxDir, mailId);
  t.equal(stored?.parsed.subject, 'Trial subject');
  t.match(stored?.parsed.html, /Hello from the test send/, 'the template’s html');
  t.match(stored?.parsed.from?.text, /sandbox@/);

  const mine = await call(owner, 'POST', `${T}/${created.id}/test-send`);
  t.equal(mine.status, 202, 'no address: the caller’s own');
  t.equal(mine.body.mails[0].to, users[0]!.email);

  const outsider = await call(admin, 'POST', `${T}/${created.id}/test-send`, { to: 'stranger@example.org' });
  t.equal(outsider.status, 409);
  t.equal(outsider.body.code, 'sandbox_relay_restricted', 'the sandbox sends only to members');
  t.match(outsider.body.detail, /stranger@example\.org/);
  const { rows } = await dbs.pool.query("SELECT count(*)::int AS n FROM mails WHERE to_email = 'stranger@example.org'");
  t.equal(rows[0].n, 0, 'nothing accepted');
  t.notOk(readMailbox(mailboxDir).some((m) => m.headers.some(([k, v]) => k === 'to' && v.includes('stranger'))), 'nothing in the mailbox for it');

  // A sender named in the body: its own rules (a verified domain sends to anyone).
  const [senderId] = await makeSenders(dbs.pool, a.tenant, { domain: 'news.example.com', senders: [{ email: 'news', name: 'News' }] });
  const viaSender = await call(admin, 'POST', `${T}/${created.id}/test-send`, { to: 'stranger@example.org', sender_id: senderId, subject: 'Own subject' });
  t.equal(viaSender.status, 202, JSON.stringify(viaSender.body));
  t.equal(viaSender.body.from, 'news@news.example.com');
  const bSender = (await makeSenders(dbs.pool, b.tenant, { domain: 'b.example.com', senders: [{ email: 'x', name: 'X' }] }))[0]!;
  t.equal((await call(admin, 'POST', `${T}/${created.id}/test-send`, { sender_id: bSender })).body.code, 'sender_not_found', 'another instance’s sender');
  t.equal((await call(admin, 'POST', `${T}/${created.id}/test-send`, { to: 'not an address' })).status, 422);
});

t.test('another instance’s template is 404 on every route', async (t) => {
  const theirs = (await call(ownerOfB, 'POST', T, { name: 'Theirs', subject: 'B', config: withText('B') }, b.slug)).body;
  for (const [method, path, body] of [
    ['GET', `${T}/${theirs.id}`, undefined],
    ['PATCH', `${T}/${theirs.id}`, { subject: 'x' }],
    ['POST', `${T}/${theirs.id}/publish`, undefined],
    ['POST', `${T}/${theirs.id}/unpublish`, undefined],
    ['POST', `${T}/${theirs.id}/copy`, { name: 'Stolen' }],
    ['POST', `${T}/${theirs.id}/test-send`, { to: viewerEmail }],
    ['DELETE', `${T}/${theirs.id}`, undefined],
  ] as const) {
    const r = await call(owner, method, path, body);
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.body.code, 'mail_template_not_found');
    t.notOk(JSON.stringify(r.body).includes('Theirs'), 'nothing of it');
  }
  t.equal((await call(ownerOfB, 'GET', `${T}/${theirs.id}`, undefined, b.slug)).body.status, 'draft', 'unchanged for its owner');
});
