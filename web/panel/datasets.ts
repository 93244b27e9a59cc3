import * as api from './api.js';
import { field, h, select } from './dom.js';
import { act, count, failed, flushNotice, heading, noticeForNextPage, pagedTable, table, when, type Paged } from './kit.js';
import { importSection } from './dataset-import.js';
import type { Context } from './context.js';

/**
 * The Datasets page (#/datasets): the datasets, and a dataset's own page (#/datasets/<id>) with
 * its channels and columns, activation, its contacts browsed and searched, and the CSV import
 * (dataset-import.ts). An admin or owner creates and changes; a viewer browses and searches.
 */

const CHANNELS = ['mail', 'sms', 'wsp'];

export async function datasetsPage(ctx: Context): Promise<Node[]> {
  const [, , id] = location.hash.split('/');
  if (Number(id) > 0) return datasetPage(ctx, Number(id));
  return listPage(ctx);
}

function boxes(legend: string, prefix: string, options: string[], ticked: string[] = []): { node: HTMLFieldSetElement; ticked(): string[] } {
  const inputs = options.map((value) => h('input', { type: 'checkbox', value, id: `${prefix}-${value}`, checked: ticked.includes(value) }));
  const node = h('fieldset', { class: 'scopes' }, h('legend', {}, legend), ...inputs.map((b, i) => h('div', { class: 'check' }, b, h('label', { for: b.id }, options[i]!))));
  return { node, ticked: () => inputs.filter((b) => b.checked).map((b) => b.value) };
}

/** Columns: one checkbox per field of the catalog, and whether it is required. */
function columnPicker(fields: api.FieldDef[], prefix: string, current: Array<{ field_key: string; required: boolean }> = []) {
  const usable = fields.filter((f) => f.is_active || current.some((c) => c.field_key === f.field_key));
  const picks = usable.map((f) => {
    const on = current.find((c) => c.field_key === f.field_key);
    const box = h('input', { type: 'checkbox', value: f.field_key, id: `${prefix}-col-${f.field_key}`, checked: !!on });
    const req = h('input', { type: 'checkbox', id: `${prefix}-req-${f.field_key}`, checked: !!on?.required });
    return { f, box, req };
  });
  const node = h(
    'fieldset',
    { class: 'scopes' },
    h('legend', {}, 'Columns (they must include the identity field)'),
    ...picks.map(({ f, box, req }) =>
      h('div', { class: 'check' }, box, h('label', { for: box.id }, `${f.name} (${f.field_key})`), ' ', req, h('label', { for: req.id }, `${f.field_key} required`)),
    ),
  );
  return { node, value: () => picks.filter((p) => p.box.checked).map((p) => ({ key: p.f.field_key, required: p.req.checked })) };
}

async function listPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Datasets of ${instance.name}`;
  const admin = instance.role !== 'viewer';
  let datasets: Paged<api.Dataset>;
  // Every field of the catalog: the identity field and column pickers offer them all.
  let fields: api.FieldDef[];
  try {
    [datasets, fields] = await Promise.all([
      pagedTable(ctx, {
        id: 'datasets',
        noun: ['dataset'],
        columns: ['Name', 'Channels', 'State', 'Created'],
        read: (n) => api.datasets(instance.slug, n),
        row: (d) =>
          h(
            'tr',
            d.is_active ? {} : { class: 'lifted' },
            h('th', { scope: 'row' }, h('a', { href: `#/datasets/${d.id}` }, d.name)),
            h('td', {}, d.channel?.join(', ') ?? 'none'),
            h('td', {}, d.is_active ? 'active' : 'inactive'),
            h('td', {}, when(d.created_at)),
          ),
      }),
      admin ? api.everyPage((n) => api.fields(instance.slug, n)) : [],
    ]);
  } catch (err) {
    return failed(title, err);
  }
  flushNotice(ctx);
  const nodes: Node[] = [heading(title)];
  if (!admin) nodes.push(h('p', {}, 'Your role here is viewer: you browse and search contacts; an admin or owner creates, changes and imports.'));
  nodes.push(datasets.node);
  if (!admin) return nodes;
  const error = h('p', { class: 'error', role: 'alert' });
  const name = h('input', { type: 'text', name: 'dataset-name', required: true, maxlength: '255', autocomplete: 'off' });
  const channels = boxes('Channels (one fixes the identifier: mail → email, sms and wsp → phone)', 'ds-channel', CHANNELS, ['mail']);
  const identity = select('dataset-identity', [['', 'as the channel says'], ...fields.filter((f) => f.is_active).map((f): [string, string] => [f.field_key, f.field_key])], '');
  const columns = columnPicker(fields, 'ds-new', [{ field_key: 'email', required: true }]);
  const button = h('button', { type: 'submit' }, 'Create dataset');
  const form = h('form', { 'aria-labelledby': 'create-dataset' }, field('Dataset name', name), channels.node, field('Identity field (several channels or none)', identity), columns.node, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    try {
      const ticked = channels.ticked();
      const made = await api.createDataset(instance.slug, { name: name.value.trim(), channel: ticked.length ? ticked : null, identity_field: identity.value || null, columns: columns.value() });
      noticeForNextPage(`The dataset ${made.name} was created.`);
      location.hash = `#/datasets/${made.id}`;
    } catch (err) {
      error.textContent = (err as Error).message;
      button.disabled = false;
    }
  });
  nodes.push(h('h2', { id: 'create-dataset' }, 'Create a dataset'), error, form);
  return nodes;
}

async function datasetPage(ctx: Context, id: number): Promise<Node[]> {
  const instance = ctx.current;
  let d: api.Dataset;
  let fields: api.FieldDef[];
  try {
    [d, fields] = await Promise.all([api.dataset(instance.slug, id), api.everyPage((n) => api.fields(instance.slug, n))]);
  } catch (err) {
    return failed('Dataset', err);
  }
  flushNotice(ctx);
  const admin = instance.role !== 'viewer';
  const columns = d.columns ?? [];
  const nodes: Node[] = [
    heading(`Dataset ${d.name}`),
    h('p', {}, h('a', { href: '#/datasets' }, 'All datasets')),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'State'),
      h('dd', {}, d.is_active ? 'active' : 'inactive (not offered to forms; it still receives contacts)'),
      h('dt', {}, 'Channels'),
      h('dd', {}, d.channel?.join(', ') ?? 'none'),
      h('dt', {}, 'Identifier'),
      h('dd', {}, d.identity_field ?? '—'),
      h('dt', {}, 'Columns'),
      h('dd', {}, columns.map((c) => `${c.field_key}${c.required ? ' (required)' : ''}`).join(', ')),
    ),
  ];
  if (admin) {
    const error = h('p', { class: 'error', role: 'alert' });
    const toggle = h('button', { type: 'button', class: 'secondary' }, d.is_active ? 'Deactivate dataset' : 'Activate dataset');
    toggle.addEventListener('click', () => void act(ctx, error, () => api.updateDataset(instance.slug, id, { is_active: !d.is_active }), `The dataset is ${d.is_active ? 'inactive' : 'active'}.`));
    const channels = boxes('Channels', 'ds-edit-channel', CHANNELS, d.channel ?? []);
    const picker = columnPicker(fields, 'ds-edit', columns);
    const forms = select('dataset-connected-forms', [['', 'refuse the change'], ['align', 'align them (the item added, required)'], ['keep', 'keep them as they are']], '');
    const form = h('form', { 'aria-labelledby': 'configure' }, channels.node, picker.node, field('Connected forms left short by a newly required column', forms), h('button', { type: 'submit' }, 'Save channels and columns'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const ticked = channels.ticked();
      const body: Record<string, unknown> = { channel: ticked.length ? ticked : null, columns: picker.value() };
      if (forms.value) body['connected_forms'] = forms.value;
      void act(ctx, error, () => api.updateDataset(instance.slug, id, body), 'The channels and columns were saved.');
    });
    nodes.push(h('div', { class: 'actions' }, toggle), h('h2', { id: 'configure' }, 'Channels and columns'), error, form);
  }
  nodes.push(...contactsSection(ctx, d, columns));
  if (admin) nodes.push(...importSection(ctx, d, columns));
  return nodes;
}

function contactsSection(ctx: Context, d: api.Dataset, columns: Array<{ field_key: string }>): Node[] {
  const error = h('p', { class: 'error', role: 'alert' });
  const identifier = h('input', { type: 'search', name: 'contact-identifier', autocomplete: 'off' });
  const operator = select('contact-operator', [['equals', 'is exactly'], ['starts_with', 'starts with']], 'equals');
  const column = select('contact-column', [['', 'no column'], ...columns.map((c): [string, string] => [c.field_key, c.field_key])], '');
  const value = h('input', { type: 'search', name: 'contact-value', autocomplete: 'off' });
  const results = h('div', { class: 'results' });
  let page = 1;
  const run = async () => {
    error.textContent = '';
    const q: Record<string, string> = { page: String(page) };
    if (identifier.value) Object.assign(q, { identifier: identifier.value, identifier_operator: operator.value });
    if (column.value && value.value) Object.assign(q, { column: column.value, value: value.value });
    try {
      const found = await api.records(ctx.current.slug, d.id, q);
      const keys = columns.map((c) => c.field_key);
      const prev = h('button', { type: 'button', class: 'secondary', disabled: page === 1 }, 'Previous page');
      const next = h('button', { type: 'button', class: 'secondary', disabled: !found.pagination.has_more }, 'Next page');
      prev.addEventListener('click', () => {
        page--;
        void run();
      });
      next.addEventListener('click', () => {
        page++;
        void run();
      });
      results.replaceChildren(
        table(
          `Page ${page}: ${count(found.data.length, 'contact')}`,
          ['Identifier', ...keys.filter((k) => k !== d.identity_field), 'Updated'],
          found.data.map((r) =>
            h('tr', {}, h('th', { scope: 'row' }, r.identifier), ...keys.filter((k) => k !== d.identity_field).map((k) => h('td', {}, r.values[k] === undefined ? '' : String(r.values[k]))), h('td', {}, when(r.updated_at))),
          ),
        ),
        h('div', { class: 'actions' }, prev, next),
      );
      ctx.announce(`${count(found.data.length, 'contact')} shown.`);
    } catch (err) {
      // A search past its time limit: the API's 503 words ("narrow it ..."), shown as they are.
      error.textContent = (err as Error).message;
    }
  };
  const form = h(
    'form',
    { class: 'inline', 'aria-labelledby': 'contacts', role: 'search' },
    field('Identifier', identifier),
    field('Match', operator),
    field('Column', column),
    field('Value', value),
    h('button', { type: 'submit' }, 'Search contacts'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    page = 1;
    void run();
  });
  void run();
  return [
    h('h2', { id: 'contacts' }, 'Contacts'),
    h('p', { class: 'help' }, 'Search by exact identifier, by its start, or by a column’s exact value; given together they all apply. A search that takes too long is stopped: narrow it with a more precise value, or search by exact identifier or prefix.'),
    form,
    error,
    results,
  ];
}
