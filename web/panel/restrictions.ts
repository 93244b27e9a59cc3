import * as api from './api.js';
import { field, h, select } from './dom.js';
import { act, failed, heading, pagedTable, when, type Paged } from './kit.js';
import type { Context } from './context.js';

/** The Restrictions page: the history (lifted ones kept and marked), newest first; an admin or owner adds and lifts. */

const REASONS: Array<[string, string]> = [
  ['unspecified', 'unspecified (by hand)'],
  ['unsubscribe', 'unsubscribe'],
  ['soft_bounce', 'soft bounce'],
  ['hard_bounce', 'hard bounce'],
];

export async function restrictionsPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Restrictions of ${instance.name}`;
  const admin = instance.role !== 'viewer';
  const error = h('p', { class: 'error', role: 'alert' });
  let paged: Paged<api.Restriction>;
  try {
    paged = await pagedTable(ctx, {
      id: 'restrictions',
      noun: ['restriction'],
      about: 'with the lifted ones',
      columns: ['Recipient', 'Reason', 'Restricted', 'State', ...(admin ? ['Actions'] : [])],
      read: (n) => api.restrictions(instance.slug, n),
      row: (r) => {
        const lifted = r.deleted_at !== null;
        const cells = [
          h('td', {}, r.recipient),
          h('td', {}, r.reason ?? '—', r.bounce_reason ? ` (${r.bounce_reason})` : ''),
          h('td', {}, when(r.restricted_at)),
          h('td', {}, lifted ? h('span', { class: 'badge' }, `lifted ${when(r.deleted_at)}`) : 'in force'),
        ];
        if (admin) {
          const lift = lifted ? null : h('button', { type: 'button', class: 'secondary', id: `lift-${r.id}`, 'aria-label': `Lift the restriction of ${r.recipient}` }, 'Lift');
          lift?.addEventListener('click', () => {
            if (confirm(`Lift the restriction of ${r.recipient}? Mail to this address is sent again.`)) void act(ctx, error, () => api.liftRestriction(instance.slug, r.id), `The restriction of ${r.recipient} was lifted.`);
          });
          cells.push(h('td', {}, lift));
        }
        return h('tr', lifted ? { class: 'lifted' } : {}, ...cells);
      },
    });
  } catch (err) {
    return failed(title, err);
  }
  const list = paged.node;
  const about = h('p', { class: 'help' }, 'No mail is sent to a restricted address while the restriction is in force. A lifted restriction stays here as history.');
  if (!admin) return [heading(title), h('p', {}, 'Your role here is viewer: an admin or owner adds and lifts restrictions.'), error, list, about];

  const recipient = h('input', { type: 'email', name: 'recipient', required: true, autocomplete: 'off' });
  const reason = select('reason', REASONS, 'unspecified');
  const form = h('form', { class: 'inline', 'aria-labelledby': 'add-restriction' }, field('Recipient', recipient), field('Reason', reason), h('button', { type: 'submit' }, 'Add restriction'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(ctx, error, () => api.addRestriction(instance.slug, { recipient: recipient.value, reason: reason.value }), `${recipient.value} is restricted.`);
  });
  return [heading(title), error, list, about, h('h2', { id: 'add-restriction' }, 'Add a restriction'), form];
}
