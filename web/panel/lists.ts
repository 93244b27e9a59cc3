import * as api from './api.js';
import { field, h, select } from './dom.js';
import { act, count, failed, flushNotice, heading, table, when } from './kit.js';
import { importRunner } from './import-progress.js';
import type { Context } from './context.js';

/**
 * The CSV lists page (#/lists): each list with its columns, rows and live uploads; an admin or
 * owner creates one, uploads a file to it (append or overwrite; its progress, summary and rejects
 * file shown by import-progress.ts, as a dataset's import) and deletes it.
 */

export async function listsPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `CSV lists of ${instance.name}`;
  let lists: { data: api.CsvList[] };
  try {
    lists = await api.lists(instance.slug);
  } catch (err) {
    return failed(title, err);
  }
  flushNotice(ctx);
  const admin = instance.role !== 'viewer';
  const error = h('p', { class: 'error', role: 'alert' });
  const nodes: Node[] = [heading(title)];
  if (!admin) nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner creates lists and uploads files.'));
  const tableOf = (data: api.CsvList[]) =>
    table(
      count(data.length, 'list'),
      ['Name', 'Columns', 'Rows', 'Live uploads', 'Created'],
      data.map((l) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, l.name),
          h('td', {}, l.columns.map((c) => `${c.field_key}:${c.position}`).join(', ') || 'none'),
          h('td', {}, `${l.rows} of at most ${l.max_rows}`),
          h('td', {}, l.uploads.map((u) => `${u.mode} ${u.rows} rows (${u.rejected} rejected)`).join('; ') || '—'),
          h('td', {}, when(l.created_at)),
        ),
      ),
    );
  let listed = tableOf(lists.data);
  /** After an upload: the table read again in place, so the upload's summary and rejects stay on the page. */
  const reread = async () => {
    const fresh = tableOf((await api.lists(instance.slug)).data);
    listed.replaceWith(fresh);
    listed = fresh;
  };
  nodes.push(error, listed);
  if (!admin) return nodes;
  for (const l of lists.data) nodes.push(...uploadForm(ctx, l, error, reread));
  const name = h('input', { type: 'text', name: 'list-name', required: true, maxlength: '255', autocomplete: 'off' });
  const columns = h('input', { type: 'text', name: 'list-columns', placeholder: 'email:1,first_name:2', autocomplete: 'off' });
  const form = h('form', { 'aria-labelledby': 'create-list' }, field('List name', name), field('Columns: field_key:position, from 1', columns), h('button', { type: 'submit' }, 'Create list'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const cols = columns.value
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean)
      .map((x) => ({ key: x.split(':')[0]!, position: Number(x.split(':')[1]) }));
    void act(ctx, error, () => api.createList(instance.slug, { name: name.value.trim(), columns: cols }), `The list ${name.value.trim()} was created.`);
  });
  nodes.push(h('h2', { id: 'create-list' }, 'Create a list'), form);
  return nodes;
}

function uploadForm(ctx: Context, l: api.CsvList, pageError: HTMLElement, reread: () => Promise<void>): Node[] {
  const id = `upload-${l.id}`;
  const error = h('p', { class: 'error', role: 'alert' });
  const file = h('input', { type: 'file', name: `${id}-file`, accept: '.csv,text/csv', required: true });
  const mode = select(`${id}-mode`, [['append', 'append its rows'], ['overwrite', 'overwrite the list with them']], 'append');
  const header = h('input', { type: 'checkbox', id: `${id}-header` });
  const runner = importRunner(ctx, { label: `Upload progress of ${l.name}`, writing: 'the list’s rows', rejectsName: `list-${l.id}-rejects.csv`, error });
  const button = h('button', { type: 'submit', 'aria-label': `Upload to ${l.name}` }, 'Upload');
  const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete list ${l.name}` }, 'Delete list');
  remove.addEventListener('click', () => {
    if (!confirm(`Delete the list ${l.name} and its rows?`)) return;
    void act(ctx, pageError, () => api.deleteList(ctx.current.slug, l.id), `The list ${l.name} was deleted.`);
  });
  file.addEventListener('change', () => runner.clear());
  const form = h(
    'form',
    { class: 'inline', 'aria-labelledby': id },
    field('CSV file', file),
    field('Mode', mode),
    h('div', { class: 'check' }, header, h('label', { for: header.id }, 'The first row is a header')),
    button,
    remove,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    error.textContent = '';
    ctx.announce('');
    button.disabled = true;
    try {
      const s = await runner.run(chosen, (key) => `/v1/private/lists/${l.id}/uploads?${new URLSearchParams({ mode: mode.value, header: String(header.checked), key })}`, (s) => [
        ['Rows', String(s['rows'])],
        ['Accepted', String(s['accepted'])],
        ['Rejected', String(s['rejected'])],
        ['Mode', mode.value],
        ['Rows in the list now', String((s['list'] as api.CsvList).rows)],
      ]);
      ctx.announce(`The file was uploaded to ${l.name}: ${count(Number(s['accepted']), 'row')} accepted, ${s['rejected']} rejected.`);
      await reread().catch(() => undefined);
    } catch (err) {
      // 409 list_import_duplicated, list_size_exceeded, a 400 for a broken file: the API's words.
      error.textContent = (err as Error).message;
    } finally {
      button.disabled = false;
    }
  });
  return [h('h2', { id }, `Upload to ${l.name}`), form, error, ...runner.nodes];
}
