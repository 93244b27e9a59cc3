import * as api from './api.js';
import { field, h } from './dom.js';
import { act, failed, heading } from './kit.js';
import { splitList } from './keys.js';
import type { Context } from './context.js';

/**
 * The instance's settings: the time zone (shown; fixed at creation), the sending limits (an admin
 * or owner changes them) and the API keys' IP allow list (the owner's, as the keys are).
 */

export async function settingsPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Settings of ${instance.name}`;
  let s: api.Settings;
  try {
    s = await api.settings(instance.slug);
  } catch (err) {
    return failed(title, err);
  }
  const admin = instance.role !== 'viewer';
  const owner = instance.role === 'owner';
  const error = h('p', { class: 'error', role: 'alert' });
  const none = 'no limit';
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Time zone'),
    h('dd', {}, s.tz ?? 'UTC (none set)', h('span', { class: 'help' }, ' — the date filters’ zone, set when the instance was created')),
    h('dt', {}, 'Send rate'),
    h('dd', {}, s.send_rate_per_second === null ? none : `${s.send_rate_per_second} mails per second`),
    h('dt', {}, 'Burst'),
    h('dd', {}, s.send_burst === null ? none : `${s.send_burst} mails`),
    h('dt', {}, 'Monthly quota'),
    h('dd', {}, s.monthly_quota === null ? none : `${s.monthly_quota} mails`),
    h('dt', {}, 'API keys allowed from'),
    h('dd', {}, s.allowed_cidrs.length ? s.allowed_cidrs.join(', ') : 'any address'),
  );
  const out: Node[] = [heading(title), error, facts];
  if (!admin) out.push(h('p', {}, 'Your role here is viewer: an admin or owner changes the limits, an owner the IP allow list.'));

  if (admin) {
    // Empty means no limit (null): the API's own way of removing one.
    const num = (name: string, value: number | null, step: string, min: string) =>
      h('input', { type: 'number', name, step, min, inputmode: step === '1' ? 'numeric' : 'decimal', value: value === null ? '' : String(value), 'aria-describedby': 'limits-help' });
    const rate = num('send_rate_per_second', s.send_rate_per_second, 'any', '0');
    const burst = num('send_burst', s.send_burst, '1', '1');
    const quota = num('monthly_quota', s.monthly_quota, '1', '0');
    const form = h(
      'form',
      { class: 'inline', 'aria-labelledby': 'limits' },
      field('Send rate (mails per second)', rate),
      field('Burst (mails)', burst),
      field('Monthly quota (mails)', quota),
      h('button', { type: 'submit' }, 'Save limits'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = (input: HTMLInputElement) => (input.value.trim() === '' ? null : Number(input.value));
      void act(ctx, error, () => api.setLimits(instance.slug, { send_rate_per_second: value(rate), send_burst: value(burst), monthly_quota: value(quota) }), 'The limits were saved.');
    });
    out.push(h('h2', { id: 'limits' }, 'Sending limits'), h('p', { id: 'limits-help', class: 'help' }, 'Leave a field empty for no limit. Mails held by the quota are released at once when it is raised.'), form);
  }
  if (admin && !owner) out.push(h('p', {}, 'Your role here is admin: the IP allow list, which guards the API keys, is the owner’s to change.'));
  if (owner) {
    const cidrs = h('textarea', { name: 'allowed_cidrs', id: 'instance-cidrs', rows: '3', 'aria-describedby': 'cidrs-help' });
    cidrs.value = s.allowed_cidrs.join('\n');
    const form = h(
      'form',
      { 'aria-labelledby': 'allow-list' },
      h('div', { class: 'field' }, h('label', { for: cidrs.id }, 'Allowed addresses and networks'), cidrs),
      h('button', { type: 'submit' }, 'Save allow list'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void act(ctx, error, () => api.setAllowList(instance.slug, splitList(cidrs.value)), 'The IP allow list was saved.');
    });
    out.push(
      h('h2', { id: 'allow-list' }, 'IP allow list of the API keys'),
      h('p', { id: 'cidrs-help', class: 'help' }, 'One address or network (CIDR) per line, or separated by commas; empty: any address. It binds the API keys, not panel sessions.'),
      form,
    );
  }
  return out;
}
