import * as api from './api.js';
import { field, h, select } from './dom.js';
import type { Context } from './context.js';

/** The Members page of the current instance: everyone reads it; only an owner sees the add, change and remove controls (the API refuses the others anyway). */

const ROLES: Array<[api.Role, string]> = [
  ['viewer', 'viewer'],
  ['admin', 'admin'],
  ['owner', 'owner'],
];

export async function membersPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const owner = instance.role === 'owner';
  const heading = h('h1', { tabindex: '-1' }, `Members of ${instance.name}`);
  const error = h('p', { class: 'error', role: 'alert' });
  let list: api.Member[];
  try {
    list = await api.members(instance.slug);
  } catch (err) {
    return [heading, h('p', { class: 'error', role: 'alert' }, (err as Error).message)];
  }
  /** Runs a change; on success announces it and draws the page again, on refusal shows the API's reason. */
  const act = async (what: () => Promise<unknown>, done: string, undo?: () => void) => {
    error.textContent = '';
    ctx.announce('');
    try {
      await what();
      await ctx.refresh();
      ctx.announce(done);
    } catch (err) {
      undo?.();
      error.textContent = (err as Error).message;
    }
  };

  const rows = list.map((m) => {
    const cells = [h('td', {}, m.email), h('td', {}, m.role), h('td', {}, m.disabled ? 'disabled' : 'active'), h('td', {}, m.created_at.slice(0, 10))];
    if (owner) {
      const role = select('role', ROLES, m.role, { 'aria-label': `Role of ${m.email}` });
      const change = h('button', { type: 'button', class: 'secondary', 'aria-label': `Change role of ${m.email}` }, 'Change role');
      // Refused (the last owner), the select shows the role the member still has.
      change.addEventListener('click', () => act(() => api.changeRole(instance.slug, m.user_id, role.value as api.Role), `${m.email} is now ${role.value}.`, () => (role.value = m.role)));
      const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${m.email}` }, 'Remove');
      remove.addEventListener('click', () => {
        if (confirm(`Remove ${m.email} from ${instance.name}?`)) void act(() => api.removeMember(instance.slug, m.user_id), `${m.email} was removed.`);
      });
      cells.push(h('td', {}, h('div', { class: 'actions' }, role, change, remove)));
    }
    return h('tr', {}, ...cells);
  });
  const columns = ['Email', 'Role', 'Status', 'Member since', ...(owner ? ['Actions'] : [])];
  const table = h(
    'table',
    {},
    h('caption', {}, `${list.length} member${list.length === 1 ? '' : 's'}`),
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows),
  );
  if (!owner) return [heading, h('p', {}, `Your role here is ${instance.role}: only an owner adds, changes or removes members.`), error, table];

  const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' });
  const role = select('role', ROLES, 'viewer');
  const add = h('form', { class: 'inline', 'aria-labelledby': 'add-member' }, field('Email', email), field('Role', role), h('button', { type: 'submit' }, 'Add member'));
  add.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(() => api.addMember(instance.slug, email.value, role.value as api.Role), `${email.value} was added as ${role.value}.`);
  });
  // The refusal of any action shows under the heading, where the page begins (and as an alert).
  return [heading, error, table, h('h2', { id: 'add-member' }, 'Add a member'), h('p', {}, 'The person needs a panel user first (cartero user create).'), add];
}
