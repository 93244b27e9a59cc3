import { h } from './dom.js';
import type { Context } from './context.js';

/**
 * The instances page, and the pages whose /v1/private API is not built yet: each says so and what
 * it will hold, and shows no data (nothing invented).
 */

export const PLACEHOLDERS: Record<string, { title: string; api: string; will: string }> = {
  domains: { title: 'Domains', api: '/v1/private/domains', will: 'add a domain and show the DKIM, return-path and DMARC records to publish with their live state, verify now and rotate DKIM' },
  dashboard: { title: 'Dashboard', api: 'the dashboard route', will: 'chart sent, delivered, bounced, complained, opened and clicked per day for a chosen range' },
};

export function instancesPage(ctx: Context): Node[] {
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
  ];
}

export function placeholderPage(ctx: Context, id: string): Node[] {
  const p = PLACEHOLDERS[id]!;
  return [
    h('h1', { tabindex: '-1' }, `${p.title} of ${ctx.current.name}`),
    h('p', { class: 'placeholder' }, `Not available in the panel yet. This page will ${p.will}, through ${p.api}, which is being built. Until then the cartero CLI and the public API do it.`),
  ];
}
