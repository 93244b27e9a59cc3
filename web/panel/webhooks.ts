import * as api from './api.js';
import { h } from './dom.js';
import { failed, flushNotice, heading, noticeForNextPage, pagedTable, when, type Paged } from './kit.js';
import { showSecretOnce, webhookPage } from './webhook.js';
import { eventsText, webhookFields } from './webhook-form.js';
import type { Context } from './context.js';

/**
 * The Webhooks page (#/webhooks): the instance's webhooks and their health; an admin or owner
 * creates one (its signing secret then shown once on the new webhook's page). A webhook's own
 * page is #/webhooks/<id> (webhook.ts).
 */

export async function webhooksPage(ctx: Context): Promise<Node[]> {
  const id = Number(location.hash.split('/')[2]);
  return Number.isInteger(id) && id > 0 ? webhookPage(ctx, id) : listPage(ctx);
}

/** Active, paused by hand, or paused by the service after persistent failures. */
export const stateText = (w: api.Webhook): string => (w.is_active ? 'active' : w.auto_paused_at ? `paused automatically ${when(w.auto_paused_at)}` : 'paused');

async function listPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Webhooks of ${instance.name}`;
  let paged: Paged<api.Webhook>;
  try {
    paged = await pagedTable(ctx, {
      id: 'webhooks',
      noun: ['webhook'],
      columns: ['Name', 'URL', 'Events', 'State', 'Last success', 'Failures'],
      read: (n) => api.webhooks(instance.slug, n),
      row: (w) =>
        h(
          'tr',
          w.is_active ? {} : { class: 'lifted' },
          h('th', { scope: 'row' }, h('a', { href: `#/webhooks/${w.id}` }, w.name)),
          h('td', {}, h('code', { class: 'record' }, w.url)),
          h('td', {}, eventsText(w.events)),
          h('td', {}, stateText(w)),
          h('td', {}, w.last_success_at ? when(w.last_success_at) : 'never'),
          h('td', {}, w.consecutive_failures ? `${w.consecutive_failures} in a row since ${when(w.failing_since)}` : 'none'),
        ),
    });
  } catch (err) {
    return failed(title, err);
  }
  flushNotice(ctx);
  const list = paged.node;
  const about = h(
    'p',
    { class: 'help' },
    'Each event is POSTed to the URL, signed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). A failed delivery is retried; a webhook failing persistently is paused until resumed.',
  );
  if (instance.role === 'viewer') return [heading(title), h('p', {}, 'Your role here is viewer: an admin or owner creates and changes webhooks.'), list, about];

  const error = h('p', { class: 'error', role: 'alert' });
  const fields = webhookFields('new-hook');
  const button = h('button', { type: 'submit' }, 'Create webhook');
  const form = h('form', { 'aria-labelledby': 'create-webhook' }, ...fields.nodes, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    try {
      const created = await api.createWebhook(instance.slug, fields.value());
      showSecretOnce(created, 'created');
      noticeForNextPage(`Webhook ${created.name} was created. Its signing secret is shown once, below its heading.`);
      location.hash = `#/webhooks/${created.id}`;
    } catch (err) {
      // 422 (a URL that is not http(s) or not public), 409 webhook_limit_reached: the API's words.
      error.textContent = (err as Error).message;
      button.disabled = false;
      error.scrollIntoView({ block: 'nearest' });
    }
  });
  return [heading(title), list, about, h('h2', { id: 'create-webhook' }, 'Create a webhook'), error, form];
}
