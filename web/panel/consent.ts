import * as api from './api.js';
import { field, h, select } from './dom.js';
import { CHANNELS, contactSection, purposeNames } from './consent-contact.js';
import { termPage } from './consent-term.js';
import { act, failed, flushNotice, heading, noticeForNextPage, pageOf, pagedTable, when, type Paged } from './kit.js';
import type { Context } from './context.js';

/**
 * The Consent page (#/consent): the instance's purposes and terms, and a contact's consent (its
 * history, its verdicts now, its proof as a file: consent-contact.ts). An admin or owner creates
 * purposes and terms; a term's own page (#/consent/terms/<id>, consent-term.ts) publishes its
 * versions, sets the current one, activates and deactivates it. A viewer sees the same, no control.
 */

/** The spec's term types (the API refuses any other with a 422). */
const TERM_TYPES = ['data_processing', 'service_terms', 'marketing', 'subscription', 'other'];

export async function consentPage(ctx: Context): Promise<Node[]> {
  const [, , what, id] = location.hash.split('/');
  if (what === 'terms' && Number(id) > 0) return termPage(ctx, Number(id));
  return mainPage(ctx);
}

/** The term's current version label, or that it has none. */
const currentText = (t: api.Term): string => t.versions.find((v) => v.is_current)?.version ?? 'none';

async function mainPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Consent of ${instance.name}`;
  const admin = instance.role !== 'viewer';
  // Every purpose and term, read page by page (the names in the tables, the term form's boxes, a
  // contact's verdicts per purpose need them all); each table shows them 100 a page.
  let purposes: api.Purpose[];
  let terms: api.Term[];
  let purposeList: Paged<api.Purpose>;
  let termList: Paged<api.Term>;
  try {
    [purposes, terms] = await Promise.all([api.everyPage((n) => api.purposes(instance.slug, n)), api.everyPage((n) => api.terms(instance.slug, n))]);
    [purposeList, termList] = await Promise.all([
      pagedTable(ctx, {
        id: 'purposes',
        noun: ['purpose'],
        columns: ['Id', 'Name', 'Created'],
        read: async (n) => pageOf(purposes, n),
        row: (p) => h('tr', {}, h('td', {}, String(p.id)), h('th', { scope: 'row' }, p.name), h('td', {}, when(p.created_at))),
      }),
      pagedTable(ctx, {
        id: 'terms',
        noun: ['term'],
        columns: ['Name', 'Type', 'Purposes', 'Channels', 'Current version', 'State'],
        read: async (n) => pageOf(terms, n),
        row: (t) =>
          h(
            'tr',
            t.is_active ? {} : { class: 'lifted' },
            h('th', { scope: 'row' }, h('a', { href: `#/consent/terms/${t.id}` }, t.name)),
            h('td', {}, t.type),
            h('td', {}, purposeNames(t.purpose_ids, purposes)),
            h('td', {}, t.channels.join(', ')),
            h('td', {}, currentText(t)),
            h('td', {}, t.is_active ? 'active' : 'inactive'),
          ),
      }),
    ]);
  } catch (err) {
    return failed(title, err);
  }
  flushNotice(ctx);

  const nodes: Node[] = [heading(title)];
  if (!admin) nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner creates purposes and terms and publishes versions.'));
  nodes.push(
    h('h2', { id: 'purposes' }, 'Purposes'),
    h('p', { class: 'help' }, 'What a consent is for (“Newsletter”). Purposes are never edited or deleted: terms and past consents name them.'),
    purposeList.node,
  );
  if (admin) nodes.push(...purposeForm(ctx));
  nodes.push(
    h('h2', { id: 'terms' }, 'Terms'),
    h('p', { class: 'help' }, 'A legal text for some purposes on some channels, with its versions. A consent freezes the current version; an inactive term receives no new consents.'),
    termList.node,
  );
  if (admin) nodes.push(...termForm(ctx, purposes));
  nodes.push(...contactSection(ctx, purposes, terms));
  return nodes;
}

function purposeForm(ctx: Context): Node[] {
  const error = h('p', { class: 'error', role: 'alert' });
  const name = h('input', { type: 'text', name: 'purpose-name', required: true, maxlength: '255', autocomplete: 'off' });
  const form = h('form', { class: 'inline', 'aria-labelledby': 'create-purpose' }, field('Purpose name', name), h('button', { type: 'submit' }, 'Create purpose'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(ctx, error, () => api.createPurpose(ctx.current.slug, name.value.trim()), `The purpose ${name.value.trim()} was created.`);
  });
  return [h('h3', { id: 'create-purpose' }, 'Create a purpose'), error, form];
}

/** Checkboxes in a fieldset with its legend: the term's purposes, or its channels. */
function boxes(legend: string, prefix: string, options: Array<[string, string]>): { node: HTMLFieldSetElement; ticked(): string[] } {
  const inputs = options.map(([value]) => h('input', { type: 'checkbox', value, id: `${prefix}-${value}` }));
  const node = h('fieldset', { class: 'scopes' }, h('legend', {}, legend), ...inputs.map((b, i) => h('div', { class: 'check' }, b, h('label', { for: b.id }, options[i]![1]))));
  return { node, ticked: () => inputs.filter((b) => b.checked).map((b) => b.value) };
}

function termForm(ctx: Context, purposes: api.Purpose[]): Node[] {
  const head = h('h3', { id: 'create-term' }, 'Create a term');
  if (!purposes.length) return [head, h('p', {}, 'Create a purpose first: a term is for at least one purpose.')];
  const error = h('p', { class: 'error', role: 'alert' });
  const name = h('input', { type: 'text', name: 'term-name', required: true, maxlength: '255', autocomplete: 'off' });
  const type = select('term-type', TERM_TYPES.map((t) => [t, t.replace('_', ' ')]), 'marketing');
  const purposeBoxes = boxes('Purposes (at least one; fixed once created)', 'term-purpose', purposes.map((p) => [String(p.id), p.name]));
  const channelBoxes = boxes('Channels (at least one; fixed once created)', 'term-channel', CHANNELS.map((c) => [c, c]));
  const button = h('button', { type: 'submit' }, 'Create term');
  const form = h('form', { 'aria-labelledby': 'create-term' }, field('Term name', name), field('Type', type), purposeBoxes.node, channelBoxes.node, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    try {
      const body = { name: name.value.trim(), type: type.value, purpose_ids: purposeBoxes.ticked().map(Number), channels: channelBoxes.ticked() };
      const created = await api.createTerm(ctx.current.slug, body);
      noticeForNextPage(`The term ${created.name} was created. Publish a version of its text and make it current before consents are registered to it.`);
      location.hash = `#/consent/terms/${created.id}`;
    } catch (err) {
      // 422 (no purpose or channel ticked: which field and why), 409 consent_term_name_taken: the API's words.
      error.textContent = (err as Error).message;
      button.disabled = false;
    }
  });
  return [head, error, form];
}
