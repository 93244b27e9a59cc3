import t, { type Test } from 'tap';
import { formSchema } from '../api/schemas/forms.js';
import { compile } from '../domain/validation.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createDataset } from '../domain/datasets/datasets.js';
import { createField } from '../domain/fields/catalog.js';
import { cliTest, failed } from './helpers/cli-test.js';
import { oneJsonObject, type CliResult } from './helpers/spawn.js';

/**
 * Form definitions (issue 15), panel-only: `cartero form create|update|activate|deactivate|delete`
 * run as a user runs them, each printing the form as GET /v1/forms/{id} shows it, with the
 * definition rules (form_name_taken, consent_channel_not_covered, form_dataset_columns_not_collected
 * and --align-dataset-columns, the file's 422) and `dataset update`'s
 * dataset_columns_not_collected_by_forms with --connected-forms keep|align.
 */
const { dbs, cli, binary, a, call, ok, file } = await cliTest(t, 'formscli', ['form:read']);
const pool = dbs.pool;
const shape = compile(formSchema, 'json');

function refused(t: Test, r: CliResult, code: string, what: string, detail?: RegExp): void {
  failed(t, r, new RegExp(`: \\d{3} ${code}: `), what, 1);
  if (detail) t.match(r.stderr, detail, `${what}: the detail says what`);
}

await createField(a.tenant, pool, { key: 'first_name', name: 'First name', type: 'text' });
await createField(a.tenant, pool, { key: 'city', name: 'City', type: 'text' });
const purpose = await createPurpose(a.tenant, pool, { name: 'News' });
const term = await createTerm(a.tenant, pool, { name: 'News terms', type: 'marketing', purposeIds: [purpose.id], channels: ['mail', 'sms'] });
await addTermVersion(a.tenant, pool, term.id, { version: '1', body: 'Text.' });
await setCurrentVersion(a.tenant, pool, term.id, '1');
const dataset = await createDataset(a.tenant, pool, { name: 'People', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'first_name', required: false }, { key: 'city', required: false }] });

const definition = (extra: object = {}) => ({
  name: 'Newsletter',
  kind: 'advanced',
  type: 'registration',
  dataset_id: dataset.id,
  requires_confirmation: true,
  settings: { title: 'Join us', design: { primary_color: '#0a7' } },
  items: [
    { type: 'field', field_key: 'email', label: 'Email', required: true },
    { type: 'field', field_key: 'first_name', label: 'Name', required: false },
    { type: 'consent', term_id: term.id, label: 'I accept the newsletter', required: true },
    { type: 'separator' },
    { type: 'text', text: 'We never share your data.' },
  ],
  ...extra,
});
const json = (name: string, value: object) => file(name, JSON.stringify(value));
let form: Record<string, any>;

t.test('form create prints the form as GET /v1/forms/{id} shows it', async (t) => {
  // Through `node bin/cartero.js` itself, once: the other commands of this file run in process (test/helpers/spawn.ts's cliRunner).
  form = oneJsonObject(await binary('form', 'create', '--instance', a.slug, '--file', json('form.json', definition())));
  shape(form);
  t.match(form, { name: 'Newsletter', kind: 'advanced', type: 'registration', dataset_id: dataset.id, requires_confirmation: true, is_active: true });
  t.match(form.items[2], { type: 'consent', term_id: term.id, channel: 'mail', term_version_id: Number, required: true });
  const got = await call('GET', `/v1/forms/${form.id}`);
  t.same(got.body, form);
});

t.test('definition refusals, each with its code', async (t) => {
  refused(t, await cli('form', 'create', '--instance', a.slug, '--file', json('dup.json', definition({ name: 'NEWSLÉTTER' }))), 'form_name_taken', 'a name differing in case and accents');
  const noEmail = definition({ name: 'No email', dataset_id: null, requires_confirmation: false, items: [{ type: 'consent', term_id: term.id, channel: 'sms' }] });
  refused(t, await cli('form', 'create', '--instance', a.slug, '--file', json('nophone.json', noEmail)), 'consent_channel_not_covered', 'sms consent, no phone field', /phone/);
  const short = definition({ name: 'Short', items: [{ type: 'field', field_key: 'email', required: false }] });
  refused(t, await cli('form', 'create', '--instance', a.slug, '--file', json('short.json', { ...short, requires_confirmation: false })), 'form_dataset_columns_not_collected', 'email not required', /email/);
  const unconfirmable = definition({ name: 'Unconfirmable', dataset_id: null, items: [{ type: 'field', field_key: 'email', required: false }] });
  refused(t, await cli('form', 'create', '--instance', a.slug, '--file', json('unconfirmable.json', unconfirmable)), 'form_confirmation_email_missing', 'confirmation without a required email');
  const bad = definition({ name: 'Bad', items: [{ type: 'field', field_key: 'nope' }, { type: 'consent', term_id: 99999 }], auto_reply_sender_id: 99999 });
  const r = await cli('form', 'create', '--instance', a.slug, '--file', json('bad.json', bad));
  refused(t, r, 'validation_error', 'every unresolved reference together');
  t.match(r.stderr, /\/items\/0\/field_key: value_error.field_not_found[\s\S]*\/items\/1\/term_id: value_error.term_not_found[\s\S]*\/auto_reply_sender_id/);
  refused(t, await cli('form', 'create', '--instance', a.slug, '--file', json('kind.json', { name: 'x', kind: 'other', type: 'registration', items: [] })), 'validation_error', 'the file’s shape');

  const aligned = await ok('form', 'create', '--instance', a.slug, '--file', json('short2.json', { ...short, requires_confirmation: false }), '--align-dataset-columns');
  t.match(aligned.items, [{ field_key: 'email', required: true }], '--align-dataset-columns makes the item required');
  t.equal((await call('GET', '/v1/forms?name=short')).body.data.length, 1);
});

t.test('form update keeps the ids of the items it names; activate, deactivate, delete', async (t) => {
  const [email, , consent] = form.items as Array<{ id: number }>;
  const updated = await ok('form', 'update', '--instance', a.slug, '--id', String(form.id), '--file', json('update.json', definition({
    name: 'Newsletter 2026',
    items: [
      { id: email!.id, type: 'field', field_key: 'email', label: 'Your email', required: true },
      { id: consent!.id, type: 'consent', term_id: term.id, label: 'Yes, the newsletter', required: true },
      { type: 'field', field_key: 'city', label: 'City' },
    ],
  })));
  t.same(updated.items.map((i: any) => [i.id, i.label]).slice(0, 2), [[email!.id, 'Your email'], [consent!.id, 'Yes, the newsletter']]);
  t.equal(updated.items.length, 3, 'items left out are removed');
  t.equal(updated.name, 'Newsletter 2026');
  t.match(await ok('form', 'deactivate', '--instance', a.slug, '--id', String(form.id)), { is_active: false });
  t.match(await ok('form', 'activate', '--instance', a.slug, '--id', String(form.id)), { is_active: true });
  form = updated;
});

t.test('dataset update: a change leaving a connected form short is refused unless --connected-forms keep|align', async (t) => {
  const columns = ['--columns', 'email:required,first_name:required,city'];
  const r = await cli('dataset', 'update', '--instance', a.slug, '--id', String(dataset.id), ...columns);
  refused(t, r, 'dataset_columns_not_collected_by_forms', 'first_name made required', /form \d+ "Newsletter 2026" does not collect first_name/);
  await ok('dataset', 'update', '--instance', a.slug, '--id', String(dataset.id), ...columns, '--connected-forms', 'keep');
  t.notOk((await call('GET', `/v1/forms/${form.id}`)).body.items.some((i: any) => i.field_key === 'first_name'), 'keep: the form is unchanged');
  await ok('dataset', 'update', '--instance', a.slug, '--id', String(dataset.id), '--columns', 'email:required,first_name:required,city:required', '--connected-forms', 'align');
  const after = (await call('GET', `/v1/forms/${form.id}`)).body;
  t.match(after.items.filter((i: any) => i.type === 'field').map((i: any) => [i.field_key, i.required]), [['email', true], ['city', true], ['first_name', true]],
    'align: city made required, first_name added');

  t.same(await ok('form', 'delete', '--instance', a.slug, '--id', String(form.id)), { id: form.id, deleted: true });
  t.equal((await call('GET', `/v1/forms/${form.id}`)).status, 404);
  refused(t, await cli('form', 'delete', '--instance', a.slug, '--id', String(form.id)), 'form_not_found', 'deleted already');
});
