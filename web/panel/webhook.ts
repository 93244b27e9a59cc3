import * as api from './api.js';
import { h } from './dom.js';
import { actFrom, afterDraw, deleteButton, failed, flushNotice, heading, secretField, takeRefocus, when } from './kit.js';
import { deliveriesSection, followDeliveries } from './webhook-deliveries.js';
import { eventsText, webhookFields } from './webhook-form.js';
import type { Context } from './context.js';

/**
 * One webhook's page (#/webhooks/<id>): its configuration and health; an admin or owner edits
 * it, pauses and resumes it, sends the test event, rotates its signing secret (the new one shown
 * once, with the 24-hour overlap of the previous one) and deletes it; then its deliveries
 * (webhook-deliveries.ts). A viewer sees the same facts and no control.
 */

/** A secret to show once, on the next drawing of its webhook's page: any later drawing has it no more. */
let pending: { id: number; hook: api.WebhookWithSecret; why: 'created' | 'rotated' } | undefined;

export function showSecretOnce(hook: api.WebhookWithSecret, why: 'created' | 'rotated'): void {
  pending = { id: hook.id, hook, why };
}

export async function webhookPage(ctx: Context, id: number): Promise<Node[]> {
  const instance = ctx.current;
  const back = h('p', {}, h('a', { href: '#/webhooks' }, 'All webhooks'));
  let w: api.Webhook;
  try {
    w = await api.webhook(instance.slug, id);
  } catch (err) {
    pending = undefined;
    return [back, ...failed('Webhook', err)];
  }
  const secret = pending?.id === id ? pending : undefined;
  pending = undefined;
  const admin = instance.role !== 'viewer';
  const error = h('p', { class: 'error', role: 'alert' });

  /** Runs a change; on success draws the page again (focus back on `button`), on a refusal shows the API's reason. */
  const run = (button: HTMLButtonElement, what: () => Promise<unknown>, done: string) => actFrom(ctx, error, button, what, done);

  const facts = h(
    'dl',
    { class: 'facts' },
    ...fact('Receiver URL', h('code', { class: 'record' }, w.url)),
    ...fact('Event types', eventsText(w.events)),
    ...fact('State', w.is_active ? 'active: events are delivered' : w.auto_paused_at ? `paused automatically ${when(w.auto_paused_at)} after persistent failures: resume it once the receiver works` : 'paused: nothing is delivered until it is resumed'),
    ...fact('Last success', when(w.last_success_at)),
    ...fact('Last failure', w.last_failure_at ? `${when(w.last_failure_at)}${w.last_status_code ? ` (HTTP ${w.last_status_code})` : ''}` : '—'),
    ...fact('Failures in a row', w.consecutive_failures ? `${w.consecutive_failures}, since ${when(w.failing_since)}` : '0'),
    ...fact('Previous secret signs until', w.previous_secret_expires_at ? when(w.previous_secret_expires_at) : 'no previous secret in force'),
    ...fact('Created', when(w.created_at)),
  );

  const nodes: Node[] = [back, heading(`Webhook ${w.name}`), error];
  if (secret) nodes.push(secretBox(ctx, secret.hook, secret.why));
  nodes.push(facts);
  if (!admin) {
    nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner edits, pauses, tests, rotates and deletes webhooks, and retries and replays deliveries.'));
  } else {
    const toggle = h('button', { type: 'button', id: 'hook-toggle', class: 'secondary' }, w.is_active ? 'Pause webhook' : 'Resume webhook');
    toggle.addEventListener('click', () =>
      run(toggle, () => api.updateWebhook(instance.slug, id, { is_active: !w.is_active }), w.is_active ? `${w.name} is paused: nothing is delivered until it is resumed.` : `${w.name} is active again.`),
    );
    const test = h('button', { type: 'button', id: 'hook-test' }, 'Send test event');
    test.addEventListener('click', () => run(test, () => api.testWebhook(instance.slug, id).then(followDeliveries), 'A test event was queued: its delivery shows below.'));
    const remove = deleteButton({
      id: 'hook-delete',
      label: 'Delete webhook',
      question: `Delete the webhook ${w.name}? Its pending deliveries and its delivery log go with it.`,
      remove: () => api.deleteWebhook(instance.slug, id),
      done: `The webhook ${w.name} was deleted.`,
      list: '#/webhooks',
      error,
    });
    nodes.push(h('div', { class: 'actions' }, toggle, test, remove));
    nodes.push(...editForm(w, (patch, button) => run(button, () => api.updateWebhook(instance.slug, id, patch), `${patch.name} was saved.`)));
    nodes.push(...rotateForm(w, (expire, button) => run(button, async () => showSecretOnce(await api.rotateWebhookSecret(instance.slug, id, expire), 'rotated'), 'The secret was rotated. The new one is shown once, below the heading.')));
  }
  nodes.push(...(await deliveriesSection(ctx, w, admin)));

  // Built to the end (no await below): what follows runs once the shell has drawn it.
  flushNotice(ctx);
  const again = takeRefocus();
  afterDraw(() => {
    if (secret) document.getElementById('secret-title')?.focus();
    else if (again) document.getElementById(again)?.focus();
  });
  return nodes;
}

const fact = (term: string, value: Node | string): Node[] => [h('dt', {}, term), h('dd', {}, value)];

function editForm(w: api.Webhook, save: (patch: api.WebhookInput, button: HTMLButtonElement) => void): Node[] {
  const fields = webhookFields('edit-hook', w);
  const button = h('button', { type: 'submit', id: 'hook-save' }, 'Save changes');
  const form = h('form', { 'aria-labelledby': 'edit-webhook' }, ...fields.nodes, button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    save(fields.value(), button);
  });
  return [h('h2', { id: 'edit-webhook' }, 'Edit'), form];
}

function rotateForm(w: api.Webhook, rotate: (expirePrevious: boolean, button: HTMLButtonElement) => void): Node[] {
  const expire = h('input', { type: 'checkbox', name: 'expire_previous', id: 'expire-previous' });
  const button = h('button', { type: 'submit', id: 'hook-rotate', class: 'secondary' }, 'Rotate secret');
  const form = h(
    'form',
    { 'aria-labelledby': 'rotate-secret' },
    h('div', { class: 'check' }, expire, h('label', { for: expire.id }, 'Stop signing with the current secret at once (no 24-hour overlap)')),
    h('p', {}, button),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const how = expire.checked ? 'The current secret stops signing at once.' : 'The current secret keeps signing beside the new one for 24 hours.';
    if (confirm(`Rotate the signing secret of ${w.name}? ${how}`)) rotate(expire.checked, button);
  });
  return [
    h('h2', { id: 'rotate-secret' }, 'Signing secret'),
    h(
      'p',
      { class: 'help' },
      'The secret is shown only when the webhook is created and when it is rotated. A new secret signs from the rotation on; by default the previous one ' +
        'keeps signing beside it for 24 hours (each delivery then carries both signatures, the new one first), so the receiver can switch at any moment in that window. ' +
        'Rotating again within the 24 hours drops the oldest secret.',
    ),
    form,
  ];
}

/** The secret, once: a read-only field with a copy button, and what the rotation did to the previous one. */
function secretBox(ctx: Context, w: api.WebhookWithSecret, why: 'created' | 'rotated'): Node {
  const done = h('button', { type: 'button' }, 'I have stored it');
  done.addEventListener('click', () => void ctx.refresh());
  const overlap =
    why === 'created'
      ? null
      : w.previous_secret_expires_at
        ? `The previous secret keeps signing beside this one until ${when(w.previous_secret_expires_at)} (24 hours): every delivery until then carries both signatures, the new one first. Put the new secret in your receiver before that time.`
        : 'The previous secret no longer signs: from now on every delivery carries only the new signature.';
  return h(
    'section',
    { class: 'once', 'aria-labelledby': 'secret-title' },
    h('h2', { id: 'secret-title', tabindex: '-1' }, why === 'created' ? `Signing secret of ${w.name}` : `New signing secret of ${w.name}`),
    h('p', { class: 'warning' }, 'This is the only time the secret is shown: Cartero shows it on creation and rotation only. Copy it now into your receiver, which verifies each delivery with it.'),
    overlap ? h('p', {}, overlap) : null,
    secretField('hook-secret', 'The signing secret', w.secret, 'Copy secret'),
    done,
  );
}
