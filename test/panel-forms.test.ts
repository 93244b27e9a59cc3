import t from 'tap';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { createDataset } from '../domain/datasets/datasets.js';
import { panelApiBench, panelHeaders } from './helpers/panel.js';

/**
 * Forms in the panel's /v1/private API (issue 31, docs/panel.md "Forms"), against the real web
 * app and Postgres: the form reads and the field catalog mirrored for any member (equal to the
 * public API's answers), create / replace / activate / deactivate / delete for an admin with the
 * CLI's rules and codes, a viewer refused them, submitting left to the integration, another
 * instance's form 404.
 */

const { pool, url, a, b, owner, admin, viewer, ownerOfB, call, publicCall } = await panelApiBench(t, 'panelforms', ['form:read', 'form:write', 'consent:read'], ['form:read']);

const purpose = await createPurpose(a.tenant, pool, { name: 'Newsletter' });
const term = await createTerm(a.tenant, pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [purpose.id], channels: ['mail'] });
await addTermVersion(a.tenant, pool, term.id, { version: 'v1', body: 'We send you the newsletter.' });
await setCurrentVersion(a.tenant, pool, term.id, 'v1');

const definition = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  kind: 'advanced',
  type: 'registration',
  settings: { title: 'Join us', header_text: 'Every week.', design: { primary_color: '#204080' } },
  items: [
    { type: 'field', field_key: 'email', required: true },
    { type: 'separator' },
    { type: 'text', text: 'Read the terms.' },
    { type: 'consent', term_id: term.id, channel: 'mail', label: 'Send me the newsletter', required: true },
  ],
  ...extra,
});

t.test('an admin creates, replaces, deactivates and deletes; a viewer reads and is refused every change', async (t) => {
  t.equal((await call(viewer, 'POST', '/v1/private/forms', definition('Signup'))).status, 403, 'a viewer cannot create');
  const made = await call(admin, 'POST', '/v1/private/forms', definition('Signup'));
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.match(made.body, { name: 'Signup', kind: 'advanced', is_active: true, settings: { title: 'Join us' } });
  t.same(made.body.items.map((i: { type: string }) => i.type), ['field', 'separator', 'text', 'consent'], 'the items in order');
  t.ok(made.body.public_token, 'a public token for the hosted page');
  const id = made.body.id as number;
  const path = `/v1/private/forms/${id}`;

  // The mirrored reads answer exactly what the public API answers.
  for (const p of ['/forms', `/forms/${id}`, '/forms?name=sign', '/fields']) {
    const panel = await call(viewer, 'GET', `/v1/private${p}`);
    t.equal(panel.status, 200, p);
    t.equal(panel.headers.get('cache-control'), 'no-store');
    const pub = await publicCall('GET', `/v1${p}`);
    if (p === '/fields') t.same(panel.body.data.map((f: { field_key: string }) => f.field_key).slice(0, 2), ['email', 'phone'], 'the catalog, system fields first');
    else t.same(panel.body, pub.body, `GET /v1/private${p} equals GET /v1${p}`);
  }
  t.same((await call(viewer, 'GET', `${path}`)).body, made.body, 'read back as created');
  const mail = await call(viewer, 'GET', `${path}/mail-settings`);
  t.same(mail.body, { auto_reply: null, team_notice_emails: [] }, 'no auto-reply, no team notice yet');
  const withMail = await call(admin, 'PUT', path, { ...definition('Signup'), auto_reply: { subject: 'Welcome', text: 'Hello' }, team_notice_emails: ['team@example.org'] });
  t.equal(withMail.status, 200, JSON.stringify(withMail.body));
  t.same((await call(viewer, 'GET', `${path}/mail-settings`)).body, { auto_reply: { subject: 'Welcome', text: 'Hello' }, team_notice_emails: ['team@example.org'] }, 'what GET /v1/forms/{id} does not show, read for the builder');

  const taken = await call(owner, 'POST', '/v1/private/forms', definition('SIGNUP'));
  t.equal(taken.status, 409);
  t.equal(taken.body.code, 'form_name_taken');

  // Replace: the consent item keeps its id, the separator and text go, a phone field is added.
  const consentItem = withMail.body.items[3];
  const replaced = await call(admin, 'PUT', path, {
    ...definition('Signup renamed'),
    items: [{ type: 'field', field_key: 'email', required: true }, { type: 'field', field_key: 'phone' }, { id: consentItem.id, type: 'consent', term_id: term.id, required: true }],
  });
  t.equal(replaced.status, 200, JSON.stringify(replaced.body));
  t.equal(replaced.body.name, 'Signup renamed');
  t.same(replaced.body.items.map((i: { type: string }) => i.type), ['field', 'field', 'consent']);
  t.equal(replaced.body.items[2].id, consentItem.id, 'an item named by id keeps it');
  t.equal((await call(viewer, 'PUT', path, definition('x'))).status, 403, 'a viewer cannot replace');

  t.equal((await call(viewer, 'PATCH', path, { is_active: false })).status, 403, 'a viewer cannot deactivate');
  const off = await call(admin, 'PATCH', path, { is_active: false });
  t.equal(off.body.is_active, false);
  const refusedSubmission = await publicCall('POST', `/v1/forms/${id}/submissions`, { items: [] });
  t.equal(refusedSubmission.body.code, 'form_not_found', 'a deactivated form takes no submission');
  t.equal((await call(admin, 'PATCH', path, { is_active: true })).body.is_active, true, 'active again');

  const notMirrored = await call(owner, 'POST', `${path}/submissions`, { items: [] });
  t.equal(notMirrored.status, 405, 'submitting is not a panel operation (the panel lists submissions, GET only)');

  t.equal((await call(viewer, 'DELETE', path)).status, 403, 'a viewer cannot delete');
  const gone = await call(owner, 'DELETE', path);
  t.same(gone.body, { id, deleted: true });
  t.equal((await call(viewer, 'GET', path)).body.code, 'form_not_found', 'gone');
  t.equal((await call(owner, 'DELETE', path)).body.code, 'form_not_found', 'deleting again: 404');
  t.equal((await call(admin, 'POST', '/v1/private/forms', definition('Signup'))).status, 201, 'the name is free again');
});

t.test('the rules: channel not covered, confirmation without email, dataset columns, unresolved references', async (t) => {
  const noEmail = await call(admin, 'POST', '/v1/private/forms', { ...definition('No email'), items: [{ type: 'consent', term_id: term.id, channel: 'mail' }] });
  t.equal(noEmail.status, 409);
  t.equal(noEmail.body.code, 'consent_channel_not_covered');
  t.match(noEmail.body.detail, /no email field/);

  const confirm = await call(admin, 'POST', '/v1/private/forms', { ...definition('Confirm'), requires_confirmation: true, items: [{ type: 'field', field_key: 'email' }] });
  t.equal(confirm.body.code, 'form_confirmation_email_missing', 'double confirmation needs a required email field');

  const dataset = await createDataset(a.tenant, pool, { name: 'Members', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'phone', required: true }] });
  const fed = { ...definition('Fed'), dataset_id: dataset.id };
  const short = await call(admin, 'POST', '/v1/private/forms', fed);
  t.equal(short.status, 409);
  t.equal(short.body.code, 'form_dataset_columns_not_collected');
  t.match(short.body.detail, /phone/, 'the detail names the column');
  const aligned = await call(admin, 'POST', '/v1/private/forms', { ...fed, align_dataset_columns: true });
  t.equal(aligned.status, 201, JSON.stringify(aligned.body));
  t.match(aligned.body.items.at(-1), { type: 'field', field_key: 'phone', required: true }, 'align_dataset_columns adds the missing column as a required item');

  const broken = await call(admin, 'POST', '/v1/private/forms', {
    ...definition('Broken'),
    items: [{ type: 'field', field_key: 'no_such_field' }, { type: 'consent', term_id: 9_999_999 }, { type: 'text' }],
  });
  t.equal(broken.status, 422);
  t.same(broken.body.errors.map((e: { pointer: string }) => e.pointer).sort(), ['/items/0/field_key', '/items/1/term_id', '/items/2/text'], 'every reference at once, with pointers');
  const shape = await call(admin, 'POST', '/v1/private/forms', { name: 'Shape', kind: 'other', type: 'registration', items: [], extra: 1 });
  t.equal(shape.status, 422, 'the definition schema refuses the shape');
});

t.test('preview: the hosted page a definition would make, drawn by its own renderer, nothing stored; the same 422s as create', async (t) => {
  const countForms = async () => Number((await pool.query('SELECT count(*) FROM forms WHERE instance_id = $1', [a.tenant.instanceId])).rows[0].count);
  const before = await countForms();
  const css = '.cf h1 { letter-spacing: 2px } /* </style><script>alert(1)</script> */';
  const def = definition('Preview me', {
    settings: { title: 'Join the preview', header_text: 'Every other week.', footer_text: 'Unsubscribe at any time.', design: { primary_color: '#204080', custom_css: css } },
  });
  const shown = await call(viewer, 'POST', '/v1/private/forms/preview', def);
  t.equal(shown.status, 200, JSON.stringify(shown.body));
  t.equal(shown.headers.get('cache-control'), 'no-store');
  const html = shown.body.html as string;
  for (const text of ['<title>Join the preview</title>', '<h1>Join the preview</h1>', 'Every other week.', 'Unsubscribe at any time.', 'Read the terms.', 'Send me the newsletter', 'We send you the newsletter.']) {
    t.ok(html.includes(text), `the page holds ${text}`);
  }
  t.ok(html.includes('.cf h1 { letter-spacing: 2px } /* \\3c /style>\\3c script>alert(1)\\3c /script> */'), 'the custom CSS, made unable to leave its <style> as on the hosted page');
  t.notOk(/<script/i.test(html), 'no script element');
  t.match(html, /<button type="submit" disabled>Send<\/button>/, 'Send disabled: nothing is submitted from a preview');
  t.equal(await countForms(), before, 'nothing stored');

  // The hosted page of the same definition once saved: the same bytes, but for the item ids, the page's submission key and the disabled Send.
  const made = await call(admin, 'POST', '/v1/private/forms', def);
  t.equal(made.status, 201, JSON.stringify(made.body));
  const hosted = await fetch(`${url}/f/${made.body.public_token}`, { headers: { accept: 'text/html' } });
  t.equal(hosted.status, 200);
  const ids = new Map<string, string>((made.body.items as Array<{ id: number }>).map((item, i) => [String(item.id), String(i + 1)]));
  const normal = (page: string) =>
    page
      .replace(/(item[-_]|term_version_)(\d+)/g, (_, p: string, id: string) => `${p}${ids.get(id) ?? id}`)
      .replace(/name="submission_key" value="[^"]*"/, 'name="submission_key" value="K"')
      .replace('<button type="submit" disabled>', '<button type="submit">');
  t.equal(normal(html), normal(await hosted.text()), 'the preview is the hosted page');
  t.match(html, new RegExp(`name="term_version_4" value="${made.body.items[3].term_version_id}"`), "the consent's current term version, as the page sends it");

  // The rules of a save (409s) are the save's: the page can be seen while it is being built.
  const noEmail = await call(viewer, 'POST', '/v1/private/forms/preview', { ...definition('No email yet'), items: [{ type: 'consent', term_id: term.id, channel: 'mail', label: 'Newsletter please' }] });
  t.equal(noEmail.status, 200, 'a consent item before its email field: drawn (the save answers consent_channel_not_covered)');
  t.ok(noEmail.body.html.includes('Newsletter please'));
  const taken = await call(viewer, 'POST', '/v1/private/forms/preview', definition('Preview me'));
  t.equal(taken.status, 200, 'a name taken: drawn (the save answers form_name_taken)');

  // align_dataset_columns: the missing columns drawn as the save adds them.
  const dataset = await createDataset(a.tenant, pool, { name: 'Preview members', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'phone', required: true }] });
  const aligned = await call(viewer, 'POST', '/v1/private/forms/preview', { ...definition('Aligned'), dataset_id: dataset.id, align_dataset_columns: true });
  t.equal(aligned.status, 200, JSON.stringify(aligned.body));
  t.match(aligned.body.html, /<label for="item-5">Phone <span class="req"/, 'the phone column added as a required item, last');

  // Invalid definitions: exactly the 422 a create answers.
  const broken = { ...definition('Broken preview'), items: [{ type: 'field', field_key: 'no_such_field' }, { type: 'consent', term_id: 9_999_999 }, { type: 'text' }], auto_reply: { template_id: 9_999_999 }, dataset_id: 9_999_999 };
  const created = await call(admin, 'POST', '/v1/private/forms', broken);
  const previewed = await call(viewer, 'POST', '/v1/private/forms/preview', broken);
  t.equal(previewed.status, 422);
  t.same(previewed.body.errors, created.body.errors, 'the same errors, pointers and codes as a create');
  t.same(previewed.body.errors.map((e: { pointer: string }) => e.pointer).sort(), ['/auto_reply/template_id', '/dataset_id', '/items/0/field_key', '/items/1/term_id', '/items/2/text']);
  const shape = { name: 'Shape', kind: 'other', type: 'registration', items: [], settings: { design: { primary_color: 'red' } } };
  const shapeCreated = await call(admin, 'POST', '/v1/private/forms', shape);
  const shapePreviewed = await call(viewer, 'POST', '/v1/private/forms/preview', shape);
  t.equal(shapePreviewed.status, 422);
  t.same(shapePreviewed.body.errors, shapeCreated.body.errors, 'the schema refuses the same shape with the same errors');
  t.equal(await countForms(), before + 1, 'only the create stored a form');
});

t.test('submissions: listed newest first with their consents, exported as formula-guarded CSV', async (t) => {
  const made = await call(admin, 'POST', '/v1/private/forms', definition('Listed'));
  const id = made.body.id as number;
  const [email, , , consent] = made.body.items;
  for (const address of ['first@example.org', '=cmd@example.org']) {
    const sent = await publicCall('POST', `/v1/forms/${id}/submissions`, {
      items: [{ item_id: email.id, value: address }, { item_id: consent.id, value: true, term_version_id: consent.term_version_id }],
    });
    t.equal(sent.status, 201, JSON.stringify(sent.body));
  }
  const listed = await call(viewer, 'GET', `/v1/private/forms/${id}/submissions`);
  t.equal(listed.status, 200, JSON.stringify(listed.body));
  t.equal(listed.headers.get('cache-control'), 'no-store');
  t.same(listed.body.data.map((s: { field_values: { email: string } }) => s.field_values.email), ['=cmd@example.org', 'first@example.org'], 'newest first');
  t.match(listed.body.data[0], { source: 'form_api', status: 'confirmed', consents: [{ term_id: term.id, term_version_id: consent.term_version_id, status: 'confirmed' }] });
  const events = await publicCall('GET', `/v1/consent-events?term_id=${term.id}`);
  t.ok(events.body.data.some((e: { id: number }) => e.id === listed.body.data[0].consents[0].event_id), 'the consent event the public API lists');
  const csv = await fetch(`${url}/v1/private/forms/${id}/submissions/export`, { headers: panelHeaders(viewer, a.slug) });
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  const bytes = Buffer.from(await csv.arrayBuffer());
  t.same([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'a UTF-8 BOM');
  const text = bytes.subarray(3).toString('utf8');
  t.ok(text.startsWith('id,created_at,source,status,confirmed_at,email,consents\r\n'), text.slice(0, 80));
  t.match(text, /,'=cmd@example\.org,/, 'a formula-like cell is guarded');
  t.equal((await call(viewer, 'GET', '/v1/private/forms/9999999/submissions')).body.code, 'form_not_found');
});

t.test("another instance's form: 404 form_not_found on every form route; B's own work", async (t) => {
  const made = await call(ownerOfB, 'POST', '/v1/private/forms', { name: 'B form', kind: 'advanced', type: 'registration', items: [{ type: 'field', field_key: 'email' }] }, b.slug);
  t.equal(made.status, 201, JSON.stringify(made.body));
  const path = `/v1/private/forms/${made.body.id}`;
  for (const [method, body, suffix] of [
    ['GET', undefined],
    ['PUT', { name: 'Taken over', kind: 'advanced', type: 'registration', items: [] }],
    ['PATCH', { is_active: false }],
    ['DELETE', undefined],
    ['GET', undefined, '/submissions'],
    ['GET', undefined, '/submissions/export'],
    ['GET', undefined, '/mail-settings'],
  ] as [string, unknown, string?][]) {
    const res = await call(owner, method, `${path}${suffix ?? ''}`, body);
    t.equal(res.status, 404, `${method} ${path} as A`);
    t.equal(res.body.code, 'form_not_found');
  }
  t.notOk((await call(viewer, 'GET', '/v1/private/forms?page_size=100')).body.data.some((x: { id: number }) => x.id === made.body.id), "A's listing has none of B's forms");
  // A preview naming B's term or dataset: A's 422, nothing of B's drawn.
  const purposeB = await createPurpose(b.tenant, pool, { name: 'B purpose' });
  const termB = await createTerm(b.tenant, pool, { name: 'B secret terms', type: 'marketing', purposeIds: [purposeB.id], channels: ['mail'] });
  await addTermVersion(b.tenant, pool, termB.id, { version: 'v1', body: 'Text only B may read.' });
  await setCurrentVersion(b.tenant, pool, termB.id, 'v1');
  const datasetB = await createDataset(b.tenant, pool, { name: 'B dataset', channel: ['mail'], columns: [{ key: 'email', required: true }] });
  const foreign = await call(owner, 'POST', '/v1/private/forms/preview', {
    name: 'Peek', kind: 'advanced', type: 'registration', dataset_id: datasetB.id,
    items: [{ type: 'field', field_key: 'email' }, { type: 'consent', term_id: termB.id }],
  });
  t.equal(foreign.status, 422);
  t.same(foreign.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code]).sort(), [['/dataset_id', 'value_error.dataset_not_found'], ['/items/1/term_id', 'value_error.term_not_found']]);
  t.notOk(JSON.stringify(foreign.body).includes('B secret terms') || JSON.stringify(foreign.body).includes('Text only B'), "nothing of B's term");
  const read = await call(ownerOfB, 'GET', path, undefined, b.slug);
  t.same(read.body, made.body, "A's attempts changed nothing");
});
