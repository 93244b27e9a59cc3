import * as api from './api.js';
import { field, h } from './dom.js';
import { purposeNames } from './consent-contact.js';
import { actFrom, failed, flushNotice, heading, refocusAfterDraw, table, when } from './kit.js';
import type { Context } from './context.js';

/**
 * A consent term's page (#/consent/terms/<id>): what it is for and on which channels (fixed), its
 * state, its versions; an admin or owner publishes a version (which does not make it current),
 * makes one current, deactivates and activates the term. A viewer sees the same, no control.
 */

export async function termPage(ctx: Context, id: number): Promise<Node[]> {
  const instance = ctx.current;
  const back = h('p', {}, h('a', { href: '#/consent' }, 'All of consent'));
  let term: api.Term;
  let purposes: api.Purpose[];
  try {
    [term, purposes] = await Promise.all([api.consentTerm(instance.slug, id), api.everyPage((n) => api.purposes(instance.slug, n))]);
  } catch (err) {
    return [back, ...failed('Consent term', err)];
  }
  const admin = instance.role !== 'viewer';
  const error = h('p', { class: 'error', role: 'alert' });

  /** Runs a change; on success draws the page again (focus back on the control `focus`), on a refusal shows the API's reason. */
  const run = (button: HTMLButtonElement, what: () => Promise<unknown>, done: string, focus = button.id) => actFrom(ctx, error, button, what, done, focus);

  const current = term.versions.find((v) => v.is_current);
  const facts = h(
    'dl',
    { class: 'facts' },
    ...fact('Type', term.type),
    ...fact('Purposes', purposeNames(term.purpose_ids, purposes)),
    ...fact('Channels', term.channels.join(', ')),
    ...fact('State', term.is_active ? 'active: receives new consents' : 'inactive: receives no new consents (the ones it has keep counting)'),
    ...fact('Current version', current ? current.version : 'none: no consent can be registered to this term until a version is made current'),
    ...fact('Term id', String(term.id)),
    ...fact('Created', when(term.created_at)),
    ...fact('Updated', when(term.updated_at)),
  );

  const rows = term.versions.map((v, i) => {
    const cells = [
      h('th', { scope: 'row' }, v.version),
      h('td', {}, when(v.published_at)),
      h('td', {}, v.is_current ? 'current' : '—'),
      h('td', {}, v.document_url ? h('a', { href: v.document_url, rel: 'noopener noreferrer' }, v.document_url) : '—'),
      h('td', {}, h('details', {}, h('summary', {}, `Text of ${v.version}`), h('pre', { class: 'legal' }, v.body))),
    ];
    if (admin) {
      const make = v.is_current ? null : h('button', { type: 'button', class: 'secondary', id: `make-current-${i}`, 'aria-label': `Make version ${v.version} current` }, 'Make current');
      make?.addEventListener('click', () =>
        run(make, () => api.setCurrentVersion(instance.slug, id, v.version), `Version ${v.version} is now the current version of ${term.name}: new consents freeze it.`, 'versions-title'),
      );
      cells.push(h('td', {}, make));
    }
    return h('tr', {}, ...cells);
  });
  const versions = table(
    term.versions.length ? `${term.versions.length} version${term.versions.length === 1 ? '' : 's'}, in publishing order` : 'No version published yet',
    ['Version', 'Published', 'Current', 'Document', 'Text', ...(admin ? ['Actions'] : [])],
    rows,
  );

  const nodes: Node[] = [back, heading(`Term ${term.name}`), error, facts];
  if (!admin) nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner publishes versions, makes one current and activates or deactivates the term.'));
  else {
    const toggle = h('button', { type: 'button', id: 'term-toggle', class: term.is_active ? 'danger' : 'secondary' }, term.is_active ? 'Deactivate term' : 'Activate term');
    toggle.addEventListener('click', () => {
      if (term.is_active && !confirm(`Deactivate ${term.name}? It receives no new consents until it is activated again; the consents it has keep counting.`)) return;
      void run(
        toggle,
        () => api.setTermActive(instance.slug, id, !term.is_active),
        term.is_active ? `${term.name} is inactive: it receives no new consents.` : `${term.name} is active again: it receives new consents.`,
      );
    });
    nodes.push(h('div', { class: 'actions' }, toggle));
  }
  nodes.push(h('h2', { id: 'versions-title', tabindex: '-1' }, 'Versions'), versions);
  if (admin) nodes.push(...publishForm(term, (body, button) => run(button, () => api.publishVersion(instance.slug, id, body), `Version ${body.version} was published. It is not current until you make it so.`, 'versions-title')));

  flushNotice(ctx);
  refocusAfterDraw();
  return nodes;
}

const fact = (term: string, value: Node | string): Node[] => [h('dt', {}, term), h('dd', {}, value)];

function publishForm(term: api.Term, publish: (body: { version: string; body: string; document_url?: string }, button: HTMLButtonElement) => void): Node[] {
  const label = h('input', { type: 'text', name: 'version', required: true, maxlength: '64', autocomplete: 'off', placeholder: 'e.g. 2026-01' });
  const text = h('textarea', { name: 'body', id: 'version-body', required: true, rows: '8' });
  const url = h('input', { type: 'url', name: 'document_url', maxlength: '2048', autocomplete: 'off', class: 'wide', placeholder: 'https://example.com/privacy' });
  const button = h('button', { type: 'submit', id: 'publish-version' }, 'Publish version');
  const form = h(
    'form',
    { 'aria-labelledby': 'publish-title' },
    field('Version label', label),
    h('div', { class: 'field' }, h('label', { for: text.id }, 'Full text of the version'), text),
    field('Document URL (optional)', url),
    button,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body: { version: string; body: string; document_url?: string } = { version: label.value.trim(), body: text.value };
    if (url.value.trim()) body.document_url = url.value.trim();
    publish(body, button);
  });
  return [
    h('h2', { id: 'publish-title' }, `Publish a version of ${term.name}`),
    h('p', { class: 'help' }, 'A published text never changes, and publishing does not make it current: make it current when consents should freeze it.'),
    form,
  ];
}
