import * as api from './api.js';
import { field, h, select } from './dom.js';
import { act, failed, flushNotice, heading, pagedTable, type Paged } from './kit.js';
import type { Context } from './context.js';

/**
 * The Fields page (#/fields): the instance's field catalog. An admin or owner creates a field,
 * deactivates or reactivates it and deletes it, with the catalog's rules said where they apply
 * (the API refuses what they forbid, and its reason is shown). A viewer sees the catalog only.
 */

const TYPES = ['text', 'email', 'phone', 'number', 'date', 'boolean', 'select'];

function rulesText(f: api.FieldDef): string {
  const r = f.rules;
  const parts = [
    r.max_length !== null ? `at most ${r.max_length} characters` : '',
    r.pattern !== null ? `matches ${r.pattern}` : '',
    r.min !== null ? `≥ ${r.min}` : '',
    r.max !== null ? `≤ ${r.max}` : '',
    f.options ? `one of ${f.options.join(', ')}` : '',
  ].filter(Boolean);
  return parts.join('; ') || '—';
}

export async function fieldsPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Fields of ${instance.name}`;
  const admin = instance.role !== 'viewer';
  const error = h('p', { class: 'error', role: 'alert' });
  const row = (f: api.FieldDef) => {
    const actions = h('td', {});
    if (admin && !f.is_system) {
      const toggle = h('button', { type: 'button', class: 'secondary', 'aria-label': `${f.is_active ? 'Deactivate' : 'Activate'} ${f.field_key}` }, f.is_active ? 'Deactivate' : 'Activate');
      toggle.addEventListener('click', () => void act(ctx, error, () => api.setFieldActive(instance.slug, f.field_key, !f.is_active), `The field ${f.field_key} is ${f.is_active ? 'inactive' : 'active'}.`));
      const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${f.field_key}` }, 'Delete');
      remove.addEventListener('click', () => {
        if (!confirm(`Delete the field ${f.field_key}? Its name is free again; its key stays reserved forever.`)) return;
        void act(ctx, error, () => api.deleteField(instance.slug, f.field_key), `The field ${f.field_key} was deleted; its key stays reserved.`);
      });
      actions.append(toggle, ' ', remove);
    } else if (f.is_system) actions.append('system field');
    return h(
      'tr',
      f.is_active ? {} : { class: 'lifted' },
      h('th', { scope: 'row' }, f.field_key),
      h('td', {}, f.name),
      h('td', {}, f.type),
      h('td', {}, rulesText(f)),
      h('td', {}, f.is_active ? 'active' : 'inactive'),
      actions,
    );
  };
  let paged: Paged<api.FieldDef>;
  try {
    paged = await pagedTable(ctx, { id: 'fields', noun: ['field'], columns: ['Key', 'Name', 'Type', 'Rules', 'State', 'Actions'], read: (n) => api.fields(instance.slug, n), row });
  } catch (err) {
    return failed(title, err);
  }
  flushNotice(ctx);
  const nodes: Node[] = [heading(title)];
  if (!admin) nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner changes the catalog.'));
  nodes.push(
    h('p', { class: 'help' }, 'The typed fields dataset columns and lists are declared with. email and phone are system fields: never deactivated or deleted. A deactivated field keeps validating the columns that declare it but cannot be declared anew. Deleting frees the name; the key is reserved forever, and a field a dataset or list declares cannot be deleted.'),
    error,
    paged.node,
  );
  if (admin) nodes.push(...createForm(ctx));
  return nodes;
}

function createForm(ctx: Context): Node[] {
  const error = h('p', { class: 'error', role: 'alert' });
  const key = h('input', { type: 'text', name: 'field-key', required: true, maxlength: '63', pattern: '[a-z][a-z0-9_]*', autocomplete: 'off' });
  const name = h('input', { type: 'text', name: 'field-name', required: true, maxlength: '255', autocomplete: 'off' });
  const type = select('field-type', TYPES.map((t) => [t, t]), 'text');
  const maxLength = h('input', { type: 'number', name: 'field-max-length', min: '1' });
  const pattern = h('input', { type: 'text', name: 'field-pattern', autocomplete: 'off' });
  const min = h('input', { type: 'number', name: 'field-min', step: 'any' });
  const max = h('input', { type: 'number', name: 'field-max', step: 'any' });
  const options = h('input', { type: 'text', name: 'field-options', autocomplete: 'off' });
  const form = h(
    'form',
    { 'aria-labelledby': 'create-field' },
    field('Key (lower-case letters, digits and _, from a letter)', key),
    field('Name', name),
    field('Type', type),
    field('Longest value (text, email)', maxLength),
    field('Pattern (text)', pattern),
    field('Smallest (number)', min),
    field('Largest (number)', max),
    field('Options, comma-separated (select)', options),
    h('button', { type: 'submit' }, 'Create field'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { key: key.value.trim(), name: name.value.trim(), type: type.value };
    if (maxLength.value) body['max_length'] = Number(maxLength.value);
    if (pattern.value) body['pattern'] = pattern.value;
    if (min.value) body['min'] = Number(min.value);
    if (max.value) body['max'] = Number(max.value);
    if (options.value) body['options'] = options.value.split(',').map((o) => o.trim());
    void act(ctx, error, () => api.createField(ctx.current.slug, body), `The field ${body['key']} was created.`);
  });
  return [h('h2', { id: 'create-field' }, 'Create a field'), error, form];
}
