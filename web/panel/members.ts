import * as api from './api.js';
import { field, h, select } from './dom.js';
import { act as run, failed } from './kit.js';
import type { Context } from './context.js';

/**
 * The Members page of the current instance: everyone reads it (members, then pending invitations)
 * and may leave the instance; only an owner sees the invite, change, remove and withdraw controls
 * (the API refuses the others anyway). An owner invites: nobody is a member before accepting
 * (docs/panel.md, Invitations).
 */

const ROLES: Array<[api.Role, string]> = [
  ['viewer', 'viewer'],
  ['admin', 'admin'],
  ['owner', 'owner'],
];

export async function membersPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const owner = instance.role === 'owner';
  const title = `Members of ${instance.name}`;
  const heading = h('h1', { tabindex: '-1' }, title);
  const error = h('p', { class: 'error', role: 'alert' });
  let list: Array<api.Member | api.Invitation>;
  try {
    list = await api.members(instance.slug);
  } catch (err) {
    return failed(title, err);
  }
  const act = (what: () => Promise<unknown>, done: string, undo?: () => void) => run(ctx, error, what, done, undo);

  const memberRow = (m: api.Member) => {
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
  };
  const invitedRow = (i: api.Invitation) => {
    const cells = [h('td', {}, i.email), h('td', {}, i.role), h('td', {}, 'invited (not accepted yet)'), h('td', {}, '—')];
    if (owner) {
      const withdraw = h('button', { type: 'button', class: 'secondary', 'aria-label': `Withdraw the invitation of ${i.email}` }, 'Withdraw');
      withdraw.addEventListener('click', () => void act(() => api.withdrawInvitation(instance.slug, i.id), `The invitation of ${i.email} was withdrawn.`));
      cells.push(h('td', {}, h('div', { class: 'actions' }, withdraw)));
    }
    return h('tr', {}, ...cells);
  };
  const rows = list.map((m) => (m.status === 'member' ? memberRow(m) : invitedRow(m)));
  const count = list.filter((m) => m.status === 'member').length;
  const pending = list.length - count;
  const columns = ['Email', 'Role', 'Status', 'Member since', ...(owner ? ['Actions'] : [])];
  const table = h(
    'table',
    {},
    h('caption', {}, `${count} member${count === 1 ? '' : 's'}${pending ? `, ${pending} invited` : ''}`),
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows),
  );

  // Anyone may leave but the last owner (the API's 409 member_last_owner is shown).
  const leave = h('button', { type: 'button', class: 'danger' }, `Leave ${instance.name}`);
  leave.addEventListener('click', async () => {
    if (!confirm(`Leave ${instance.name}? You lose access to it at once.`)) return;
    error.textContent = '';
    try {
      await api.leaveInstance(instance.slug);
      // To the Instances page without a hashchange: the reload below draws it, for the instances left.
      history.replaceState(null, '', '#/instances');
      await ctx.reload(`You left ${instance.name}.`);
    } catch (err) {
      error.textContent = (err as Error).message;
    }
  });
  const leaving = [h('h2', { id: 'leave' }, 'Leave this instance'), h('p', {}, 'You stop being a member at once. The last owner cannot leave: make another member owner first.'), leave];
  if (!owner) return [heading, h('p', {}, `Your role here is ${instance.role}: only an owner invites, changes or removes members.`), error, table, ...leaving];

  const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' });
  const role = select('role', ROLES, 'viewer');
  const add = h('form', { class: 'inline', 'aria-labelledby': 'add-member' }, field('Email', email), field('Role', role), h('button', { type: 'submit' }, 'Invite'));
  add.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(() => api.inviteMember(instance.slug, email.value, role.value as api.Role), `${email.value} was invited as ${role.value}.`);
  });
  // The refusal of any action shows under the heading, where the page begins (and as an alert).
  return [
    heading,
    error,
    table,
    h('h2', { id: 'add-member' }, 'Invite a member'),
    h('p', {}, 'The person becomes a member once they accept the invitation in the panel (they need a panel user for that: cartero user create).'),
    add,
    ...leaving,
  ];
}
