import * as api from './api.js';
import { field, h } from './dom.js';
import { act, failed, heading, pagedTable, when, type Paged } from './kit.js';
import type { Context } from './context.js';

/** The Senders page: everyone reads; an admin or owner creates senders and turns a sender's consent requirement on or off. */

export async function sendersPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Senders of ${instance.name}`;
  const admin = instance.role !== 'viewer';
  const error = h('p', { class: 'error', role: 'alert' });
  let paged: Paged<api.Sender>;
  try {
    paged = await pagedTable(ctx, {
      id: 'senders',
      noun: ['sender'],
      columns: ['Name', 'Address', 'Domain', 'Consent', 'Created', ...(admin ? ['Actions'] : [])],
      read: (n) => api.senders(instance.slug, n),
      row: (s) => {
        const cells = [
          h('td', {}, s.name),
          h('td', {}, s.email_address),
          h('td', {}, s.is_sandbox ? 'sandbox: sends only to members' : s.domain_is_verified ? 'verified' : 'not verified'),
          h('td', {}, s.is_consent_required ? 'required' : 'not required'),
          h('td', {}, when(s.created_at)),
        ];
        if (admin) {
          const turn = s.is_consent_required ? 'off' : 'on';
          const toggle = h('button', { type: 'button', class: 'secondary', 'aria-label': `Turn consent ${turn} for ${s.email_address}` }, `Turn consent ${turn}`);
          toggle.addEventListener('click', () =>
            act(ctx, error, () => api.setConsentRequired(instance.slug, s.id, !s.is_consent_required), `${s.email_address} ${s.is_consent_required ? 'no longer requires' : 'now requires'} consent.`),
          );
          cells.push(h('td', {}, toggle));
        }
        return h('tr', {}, ...cells);
      },
    });
  } catch (err) {
    return failed(title, err);
  }
  const list = paged.node;
  const about = h(
    'p',
    { class: 'help' },
    'A sender whose consent is required sends only to recipients who gave consent. The domain is verified on the Domains page (or with cartero domain verify). ' +
      'The sandbox sender needs no DNS record of yours: it sends only to the addresses of this instance’s members, to try Cartero before publishing records.',
  );
  if (!admin) return [heading(title), h('p', {}, `Your role here is viewer: an admin or owner creates senders and changes their consent requirement.`), error, list, about];

  const name = h('input', { type: 'text', name: 'name', required: true, autocomplete: 'off', maxlength: '255' });
  const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' });
  const consent = h('input', { type: 'checkbox', name: 'is_consent_required', id: 'sender-consent' });
  const form = h(
    'form',
    { class: 'inline', 'aria-labelledby': 'create-sender' },
    field('Name', name),
    field('Sending address', email),
    h('div', { class: 'field check' }, consent, h('label', { for: consent.id }, 'Requires consent')),
    h('button', { type: 'submit' }, 'Create sender'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(ctx, error, () => api.createSender(instance.slug, { email: email.value, name: name.value, is_consent_required: consent.checked }), `Sender ${email.value} was created.`);
  });
  return [heading(title), error, list, about, h('h2', { id: 'create-sender' }, 'Create a sender'), h('p', { class: 'help' }, "Its domain is added when it is not the instance's yet; it sends once the domain's DNS records are verified."), form];
}
