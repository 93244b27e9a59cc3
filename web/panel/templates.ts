import * as api from './api.js';
import { field, h, select } from './dom.js';
import { act, failed, flushNotice, heading, noticeForNextPage, pagedTable, when, type Paged } from './kit.js';
import { templatePage } from './template.js';
import type { Context } from './context.js';

/**
 * The Templates page (#/templates): the instance's templates (name, published or draft, native or
 * external, last change); an admin or owner creates one (from the format's skeleton, from a design
 * document file, or as a copy of another), publishes and unpublishes, deletes (after a
 * confirmation). A template's own page is #/templates/<id> (template.ts).
 */

export async function templatesPage(ctx: Context): Promise<Node[]> {
  const id = Number(location.hash.split('/')[2]);
  return Number.isInteger(id) && id > 0 ? templatePage(ctx, id) : listPage(ctx);
}

export const statusText = (t: api.TemplateSummary): string => (t.status === 'public' ? 'published' : 'draft');
export const providerText = (t: api.TemplateSummary): string => (t.provider === 'external' ? 'external (read-only)' : 'native');

async function listPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Templates of ${instance.name}`;
  const admin = instance.role !== 'viewer';
  const error = h('p', { class: 'error', role: 'alert' });
  const row = (t: api.TemplateSummary) => {
    const cells = [
      h('th', { scope: 'row' }, h('a', { href: `#/templates/${t.id}` }, t.name)),
      h('td', {}, t.subject ?? '—'),
      h('td', {}, statusText(t)),
      h('td', {}, providerText(t)),
      h('td', {}, when(t.updated_at)),
    ];
    if (admin) {
      const publish = h('button', { type: 'button', class: 'secondary', 'aria-label': `${t.status === 'public' ? 'Unpublish' : 'Publish'} ${t.name}` }, t.status === 'public' ? 'Unpublish' : 'Publish');
      publish.addEventListener('click', () =>
        act(ctx, error, () => api.publishTemplate(instance.slug, t.id, t.status !== 'public'), t.status === 'public' ? `${t.name} is a draft again.` : `${t.name} is published.`),
      );
      const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${t.name}` }, 'Delete');
      remove.addEventListener('click', () => {
        if (confirm(`Delete the template ${t.name}? Sends already accepted keep their content; its name becomes free.`)) {
          void act(ctx, error, () => api.deleteTemplate(instance.slug, t.id), `The template ${t.name} was deleted.`);
        }
      });
      cells.push(h('td', {}, h('div', { class: 'actions' }, publish, remove)));
    }
    return h('tr', {}, ...cells);
  };
  let paged: Paged<api.TemplateSummary>;
  // An admin copies any template: the create form offers every one, whatever page the table shows.
  let every: api.TemplateSummary[] = [];
  try {
    [paged, every] = await Promise.all([
      pagedTable(ctx, { id: 'templates', noun: ['template'], columns: ['Name', 'Subject', 'State', 'Kind', 'Updated', ...(admin ? ['Actions'] : [])], read: (n) => api.templates(instance.slug, n), row }),
      admin ? api.everyPage((n) => api.templates(instance.slug, n)) : [],
    ]);
  } catch (err) {
    return failed(title, err);
  }
  flushNotice(ctx);
  const list = paged.node;
  const about = h(
    'p',
    { class: 'help' },
    'A draft is sent only by a send with test_mode; a published template by any send, and is not editable until unpublished. External templates come from an editor no longer offered: they are read-only.',
  );
  if (!admin) return [heading(title), h('p', {}, 'Your role here is viewer: an admin or owner creates, edits, publishes and deletes templates.'), list, about];
  return [heading(title), error, list, about, ...createForm(ctx, every)];
}

/** Create: a name, and where the design comes from (the skeleton, a file, or another template). */
function createForm(ctx: Context, existing: api.TemplateSummary[]): Node[] {
  const instance = ctx.current;
  const error = h('p', { class: 'error', role: 'alert' });
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '255', autocomplete: 'off' });
  const source = select('source', [['skeleton', 'An empty design (the format’s skeleton)'], ['file', 'A design document file (JSON, as Beefree saves it)'], ...(existing.length ? [['copy', 'A copy of a template'] as [string, string]] : [])], 'skeleton');
  const file = h('input', { type: 'file', name: 'file', accept: 'application/json,.json' });
  const original = select('original', existing.map((t): [string, string] => [String(t.id), t.name]), String(existing[0]?.id ?? ''));
  const fileField = field('Design document file', file);
  const copyField = field('Template to copy', original);
  const show = () => {
    fileField.hidden = source.value !== 'file';
    copyField.hidden = source.value !== 'copy';
  };
  source.addEventListener('change', show);
  show();
  const button = h('button', { type: 'submit' }, 'Create template');
  const form = h('form', { 'aria-labelledby': 'create-template' }, field('Name', name), field('Start from', source), fileField, copyField, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    try {
      let created: api.Template;
      if (source.value === 'copy') {
        created = await api.copyTemplate(instance.slug, Number(original.value), name.value);
      } else {
        let config: unknown;
        if (source.value === 'file') {
          const chosen = file.files?.[0];
          if (!chosen) throw new Error('Choose a design document file.');
          try {
            config = JSON.parse(await chosen.text());
          } catch (err) {
            throw new Error(`${chosen.name} is not JSON: ${(err as Error).message}`);
          }
        } else {
          config = (await api.templateFormat(instance.slug)).skeleton;
        }
        created = await api.createTemplate(instance.slug, { name: name.value, config });
      }
      noticeForNextPage(`The template ${created.name} was created.`);
      location.hash = `#/templates/${created.id}`;
    } catch (err) {
      error.textContent = (err as Error).message;
      button.disabled = false;
      error.scrollIntoView({ block: 'nearest' });
    }
  });
  return [h('h2', { id: 'create-template' }, 'Create a template'), error, form];
}
