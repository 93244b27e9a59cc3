import * as api from './api.js';
import { field, h, select } from './dom.js';
import { act, count, failed, flushNotice, heading, table, when } from './kit.js';
import type { Context } from './context.js';

/**
 * The CSV lists page (#/lists): each list with its columns, rows and live uploads; an admin or
 * owner creates one, uploads a file to it (append or overwrite) and deletes it.
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
  nodes.push(
    error,
    table(
      count(lists.data.length, 'list'),
      ['Name', 'Columns', 'Rows', 'Live uploads', 'Created'],
      lists.data.map((l) =>
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
    ),
  );
  if (!admin) return nodes;
  for (const l of lists.data) nodes.push(...uploadForm(ctx, l, error));
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

function uploadForm(ctx: Context, l: api.CsvList, error: HTMLElement): Node[] {
  const id = `upload-${l.id}`;
  const file = h('input', { type: 'file', name: `${id}-file`, accept: '.csv,text/csv', required: true });
  const mode = select(`${id}-mode`, [['append', 'append its rows'], ['overwrite', 'overwrite the list with them']], 'append');
  const header = h('input', { type: 'checkbox', id: `${id}-header` });
  const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete list ${l.name}` }, 'Delete list');
  remove.addEventListener('click', () => {
    if (!confirm(`Delete the list ${l.name} and its rows?`)) return;
    void act(ctx, error, () => api.deleteList(ctx.current.slug, l.id), `The list ${l.name} was deleted.`);
  });
  const form = h(
    'form',
    { class: 'inline', 'aria-labelledby': id },
    field('CSV file', file),
    field('Mode', mode),
    h('div', { class: 'check' }, header, h('label', { for: header.id }, 'The first row is a header')),
    h('button', { type: 'submit' }, 'Upload'),
    remove,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    void act(
      ctx,
      error,
      async () => {
        const s = await api.sendCsv<{ accepted: number; rejected: number }>(ctx.current.slug, `/v1/private/lists/${l.id}/uploads?mode=${mode.value}&header=${header.checked}`, chosen);
        return s;
      },
      `The file was uploaded to ${l.name}.`,
    );
  });
  return [h('h2', { id }, `Upload to ${l.name}`), form];
}
