import { h } from './dom.js';
import type { Context } from './context.js';
import { invitationsSection } from './invitations.js';

/** The instances page: the member's instances, their role in each, the switch between them, and its pending invitations. */
export async function instancesPage(ctx: Context): Promise<Node[]> {
  const invitations = await invitationsSection(ctx.reload);
  const rows = ctx.instances.map((i) =>
    h(
      'tr',
      i.slug === ctx.current.slug ? { 'aria-current': 'true', class: 'current' } : {},
      h('td', {}, i.name),
      h('td', {}, h('code', {}, i.slug)),
      h('td', {}, i.role),
      h('td', {}, i.enabled ? 'enabled' : 'disabled'),
      h('td', {}, i.slug === ctx.current.slug ? 'current' : h('button', { type: 'button', class: 'secondary', 'aria-label': `Work on ${i.name}`, onclick: () => ctx.switchTo(i.slug) }, 'Work on')),
    ),
  );
  return [
    h('h1', { tabindex: '-1' }, 'Instances'),
    h('p', {}, 'The instances you are a member of, with your role in each. Choose the one to work on here or with the Instance switcher at the top; the other pages show the current one.'),
    h(
      'table',
      {},
      h('caption', {}, `${ctx.instances.length} instance${ctx.instances.length === 1 ? '' : 's'}`),
      h('thead', {}, h('tr', {}, ...['Name', 'Slug', 'Your role', 'State', 'Current'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ...rows),
    ),
    ...invitations,
  ];
}
