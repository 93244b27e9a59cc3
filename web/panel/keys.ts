import * as api from './api.js';
import { field, h } from './dom.js';
import { act, count, failed, heading, secretField, table, when } from './kit.js';
import type { Context } from './context.js';

/**
 * The API keys page (owner only: the API refuses anyone else, reading included). The list holds no
 * secret (the service keeps none); the full key is in the creation's answer only, so the page shows
 * it once, with a copy button, until the person leaves the page.
 */

/** Every scope the service knows (domain/tenancy/api-keys.ts SCOPES; the API refuses any other with a 422). */
const SCOPES = [
  'mail:read', 'mail:send', 'templates:read', 'templates:write', 'consent:read', 'consent:write', 'dataset:read', 'dataset:write',
  'form:read', 'form:write', 'senders:read', 'domains:read', 'webhooks:read', 'webhooks:write',
];

/** Comma, space or line separated networks, as typed. */
export const splitList = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);

export async function keysPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `API keys of ${instance.name}`;
  if (instance.role !== 'owner') {
    return [heading(title), h('p', {}, `Your role here is ${instance.role}: API keys are the owner's to see, create and revoke. Ask an owner of ${instance.name}.`)];
  }
  let list: api.ApiKey[];
  try {
    list = await api.keys(instance.slug);
  } catch (err) {
    return failed(title, err);
  }
  const error = h('p', { class: 'error', role: 'alert' });
  const rowOf = (k: api.ApiKey) => {
    const state = k.revoked_at ? `revoked ${when(k.revoked_at)}` : k.expires_at && Date.parse(k.expires_at) <= Date.now() ? 'expired' : 'active';
    const cells = [
      h('td', {}, h('code', {}, k.key_id)),
      h('td', {}, k.scopes.join(', ') || '—'),
      h('td', {}, k.allowed_cidrs.length ? k.allowed_cidrs.join(', ') : 'any address'),
      h('td', {}, k.expires_at ? when(k.expires_at) : 'never'),
      h('td', {}, when(k.created_at)),
      h('td', {}, state),
    ];
    const revoke = k.revoked_at
      ? null
      : h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${k.key_id}` }, 'Revoke');
    revoke?.addEventListener('click', () => {
      if (confirm(`Revoke key ${k.key_id}? Every integration using it stops working at once.`)) {
        void act(ctx, error, () => api.revokeKey(instance.slug, k.key_id), `Key ${k.key_id} was revoked.`);
      }
    });
    cells.push(h('td', {}, revoke));
    return h('tr', {}, ...cells);
  };
  const tableOf = (keys: api.ApiKey[]) => table(count(keys.length, 'key'), ['Key id', 'Scopes', 'Allowed from', 'Expires', 'Created', 'State', 'Actions'], keys.map(rowOf));
  let listed = tableOf(list);

  // The creation form: scopes as checkboxes in a fieldset (its legend names the group).
  const boxes = SCOPES.map((s) => h('input', { type: 'checkbox', name: 'scope', value: s, id: `scope-${s.replace(':', '-')}` }));
  const scopes = h(
    'fieldset',
    { class: 'scopes' },
    h('legend', {}, 'Scopes (at least one)'),
    ...boxes.map((b) => h('div', { class: 'check' }, b, h('label', { for: b.id }, b.value))),
  );
  const cidrs = h('textarea', { name: 'allowed_cidrs', id: 'key-cidrs', rows: '2', 'aria-describedby': 'key-cidrs-help' });
  const expires = h('input', { type: 'date', name: 'expires_at' });
  const shown = h('div', { class: 'once', hidden: true });
  const form = h(
    'form',
    { 'aria-labelledby': 'create-key' },
    scopes,
    h('div', { class: 'field' }, h('label', { for: cidrs.id }, 'IP allow list (optional)'), cidrs, h('p', { id: 'key-cidrs-help', class: 'help' }, 'Addresses or networks (CIDR) the key may be used from, separated by commas or lines; empty: any address.')),
    field('Expires on (optional, end of that day UTC)', expires),
    h('button', { type: 'submit' }, 'Create key'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    ctx.announce('');
    const body: { scopes: string[]; allowed_cidrs?: string[]; expires_at?: string } = { scopes: boxes.filter((b) => b.checked).map((b) => b.value) };
    const networks = splitList(cidrs.value);
    if (networks.length) body.allowed_cidrs = networks;
    if (expires.value) body.expires_at = `${expires.value}T23:59:59Z`;
    try {
      const created = await api.createKey(instance.slug, body);
      showOnce(created);
    } catch (err) {
      error.textContent = (err as Error).message;
      error.scrollIntoView({ block: 'nearest' });
    }
  });

  const createHeading = h('h2', { id: 'create-key' }, 'Create a key');

  /** The new key, once: not redrawn from the list (which has no secret), gone when the page changes. */
  function showOnce(created: api.CreatedKey): void {
    const done = h('button', { type: 'button' }, 'I have stored it');
    done.addEventListener('click', () => void ctx.refresh());
    shown.replaceChildren(
      h('h2', { id: 'new-key-title', tabindex: '-1' }, `Key ${created.key_id} created`),
      h('p', { class: 'warning' }, 'This is the only time the full key is shown: Cartero does not keep it. Copy it now and store it where your integration reads its secrets.'),
      secretField('new-key', 'The new API key', created.key, 'Copy key'),
      h('p', {}, `Scopes: ${created.scopes.join(', ')}. Allowed from: ${created.allowed_cidrs.length ? created.allowed_cidrs.join(', ') : 'any address'}. Expires: ${created.expires_at ? when(created.expires_at) : 'never'}.`),
      done,
    );
    shown.hidden = false;
    form.hidden = true;
    createHeading.hidden = true;
    // The list again, with the new key's id (never its secret); the shown key stays above it.
    void api.keys(instance.slug).then((keys) => {
      const fresh = tableOf(keys);
      listed.replaceWith(fresh);
      listed = fresh;
    }, () => undefined);
    ctx.announce(`Key ${created.key_id} was created. Its full value is shown once, below.`);
    shown.querySelector<HTMLElement>('h2')!.focus();
  }

  return [
    heading(title),
    error,
    shown,
    listed,
    h('p', { class: 'help' }, 'A key reads crt.<key id>.<secret>; the list shows the id only. The secret is never stored, only its hash.'),
    createHeading,
    form,
  ];
}
