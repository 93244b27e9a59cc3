import * as api from './api.js';
import { h } from './dom.js';

/**
 * The signed-in user's pending invitations (docs/panel.md, Invitations), shown on the Instances
 * page and on the page of a user with no instance yet: an owner's invitation makes nobody a member
 * until it is accepted here. `reload` draws the shell again with the user's instances as they are
 * now (an accepted one among them), saying what happened.
 */
export async function invitationsSection(reload: (message: string, slug?: string) => Promise<void>): Promise<Node[]> {
  let list: api.ReceivedInvitation[];
  try {
    list = await api.invitations();
  } catch (err) {
    return [h('p', { class: 'error', role: 'alert' }, (err as Error).message)];
  }
  if (!list.length) return [];
  const error = h('p', { class: 'error', role: 'alert' });
  const act = async (what: () => Promise<unknown>, done: string, slug?: string) => {
    error.textContent = '';
    try {
      await what();
      await reload(done, slug);
    } catch (err) {
      error.textContent = (err as Error).message;
    }
  };
  const rows = list.map((i) => {
    const accept = h('button', { type: 'button', 'aria-label': `Accept the invitation to ${i.instance.name}` }, 'Accept');
    accept.addEventListener('click', () => void act(() => api.acceptInvitation(i.id), `You are now a member of ${i.instance.name} (${i.role}).`, i.instance.slug));
    const decline = h('button', { type: 'button', class: 'secondary', 'aria-label': `Decline the invitation to ${i.instance.name}` }, 'Decline');
    decline.addEventListener('click', () => void act(() => api.declineInvitation(i.id), `You declined the invitation to ${i.instance.name}.`));
    return h(
      'tr',
      {},
      h('td', {}, i.instance.name),
      h('td', {}, h('code', {}, i.instance.slug)),
      h('td', {}, i.role),
      h('td', {}, i.created_at.slice(0, 10)),
      h('td', {}, h('div', { class: 'actions' }, accept, decline)),
    );
  });
  return [
    h('h2', { id: 'invitations' }, 'Invitations'),
    h('p', {}, 'An owner invited you to these instances. You become a member only if you accept.'),
    error,
    h(
      'table',
      { 'aria-labelledby': 'invitations' },
      h('caption', {}, `${list.length} pending invitation${list.length === 1 ? '' : 's'}`),
      h('thead', {}, h('tr', {}, ...['Instance', 'Slug', 'Role offered', 'Invited on', 'Answer'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ...rows),
    ),
  ];
}
