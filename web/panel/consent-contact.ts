import * as api from './api.js';
import { field, h, select } from './dom.js';
import { count, pager, table, when } from './kit.js';
import type { Context } from './context.js';

/**
 * A contact's consent, on the Consent page: its history (GET …/consent-events?contact=, every
 * event with a rule for it, newest first), its verdicts now per purpose and channel (the resolver,
 * GET …/consent-rules/resolve, as sending asks it), and its proof (GET …/consent-events/proof)
 * saved as a JSON file, the API's bytes as they came.
 */

/** The spec's channels (the API refuses any other with a 422). */
export const CHANNELS = ['mail', 'sms', 'wsp', 'call', 'push'];

/** "Newsletter, Offers" from purpose ids (an id not among `purposes` as #id). */
export const purposeNames = (ids: number[], purposes: api.Purpose[]): string => ids.map((id) => purposes.find((p) => p.id === id)?.name ?? `#${id}`).join(', ');

const TYPES: Array<[string, string]> = [
  ['email_address', 'email address'],
  ['phone_number', 'phone number (E.164)'],
  ['uniquecode', 'uniquecode (your own customer code)'],
];
/** Which identifier carries consent on which channel (domain/consent/vocabulary.ts): the channels its verdicts are asked for. */
const CHANNELS_OF: Record<string, string[]> = { email_address: ['mail'], phone_number: ['sms', 'wsp', 'call'], uniquecode: CHANNELS };
/** The resolver's most purposes per call. */
const PER_CALL = 20;

/** The last contact looked up, kept while the panel is open: a redraw of the page (after a change) shows it again. */
let last: { slug: string; contact: string; type: string } | undefined;

export function contactSection(ctx: Context, purposes: api.Purpose[], terms: api.Term[]): Node[] {
  const slug = ctx.current.slug;
  const kept = last?.slug === slug ? last : undefined;
  const contact = h('input', { type: 'text', name: 'contact', required: true, maxlength: '320', autocomplete: 'off', value: kept?.contact ?? '', spellcheck: 'false' });
  const type = select('contact-type', TYPES, kept?.type ?? 'email_address');
  const error = h('p', { class: 'error', role: 'alert' });
  const results = h('div', { id: 'contact-results' });
  const button = h('button', { type: 'submit' }, 'Look up');
  const form = h('form', { class: 'inline', 'aria-labelledby': 'contact-title' }, field('Contact', contact), field('Identifier type', type), button);

  const lookUp = async (announce: boolean) => {
    error.textContent = '';
    // The stored form: email addresses are kept lowercased (the listing and the proof match exactly).
    const stored = type.value === 'email_address' ? contact.value.trim().toLowerCase() : contact.value.trim();
    if (!stored) return;
    last = { slug, contact: stored, type: type.value };
    button.disabled = true;
    try {
      const channels = CHANNELS_OF[type.value]!;
      const ids = purposes.map((p) => p.id);
      const chunks = Array.from({ length: Math.ceil(ids.length / PER_CALL) }, (_, i) => ids.slice(i * PER_CALL, (i + 1) * PER_CALL));
      const [history, ...answers] = await Promise.all([
        api.consentHistory(slug, stored),
        ...channels.flatMap((channel) => chunks.map((chunk) => api.resolveConsent(slug, { contact: stored, contact_type: type.value, channel, purpose_ids: chunk }))),
      ]);
      const verdicts = answers.flatMap((a) => a!.data);
      const events = history as api.Page<api.ConsentEvent>;
      results.replaceChildren(...drawResults(ctx, stored, events, verdicts, channels, purposes, terms));
      if (announce) ctx.announce(`${stored}: ${count(events.data.length, 'consent event')}${events.pagination.has_more ? ' on the first page, more on the next' : ''}; ${summary(verdicts)}.`);
    } catch (err) {
      results.replaceChildren();
      error.textContent = (err as Error).message;
    } finally {
      button.disabled = false;
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void lookUp(true);
  });
  if (kept) void lookUp(false);
  return [
    h('h2', { id: 'contact-title' }, 'A contact’s consent'),
    h('p', { class: 'help' }, 'Its history (every event with a rule for it, newest first), its verdict now for each purpose on each channel its type reaches (what sending checks), and its proof of consent as a file.'),
    form,
    error,
    results,
  ];
}

const summary = (verdicts: api.Verdict[]): string => {
  const n = (v: string) => verdicts.filter((x) => x.verdict === v).length;
  return `${n('allowed')} allowed, ${n('denied')} denied, ${n('no_consent')} without consent`;
};

const VERDICT_TEXT: Record<api.Verdict['verdict'], string> = { allowed: 'allowed', denied: 'denied', no_consent: 'no consent' };

function drawResults(ctx: Context, contact: string, history: api.Page<api.ConsentEvent>, verdicts: api.Verdict[], channels: string[], purposes: api.Purpose[], terms: api.Term[]): Node[] {
  const termName = (id: number) => terms.find((t) => t.id === id)?.name ?? `term #${id}`;
  // The history, 100 events a page, newest first (the listing's total is not counted: has_more pages it).
  const historyTable = pager(
    ctx,
    {
      id: 'consent-events',
      keep: null,
      noun: ['consent event'],
      about: `of ${contact}`,
      columns: ['Event', 'Registered', 'Term', 'Status', 'Method', 'Source', 'Rules for this contact'],
      read: (n) => api.consentHistory(ctx.current.slug, contact, n),
      row: (e) => {
        const mine = e.rules.filter((r) => r.contact === contact);
        return h(
          'tr',
          e.status === 'confirmed' ? {} : { class: 'lifted' },
          h('td', {}, String(e.id)),
          h('td', {}, when(e.created_at)),
          h('td', {}, termName(e.term_id)),
          h('td', {}, e.status, e.confirmed_at ? ` ${when(e.confirmed_at)}` : ''),
          h('td', {}, e.method.replace(/_/g, ' ')),
          h('td', {}, e.source, e.form_name ? ` (${e.form_name})` : ''),
          h('td', {}, ...mine.map((r, i) => h('span', { class: 'rule' }, i ? '; ' : '', `${r.action} ${r.channel} for ${purposeNames([r.purpose_id], purposes)}`))),
        );
      },
    },
    history,
  );

  const verdictRows = purposes.map((p) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, p.name),
      ...channels.map((channel) => {
        const v = verdicts.find((x) => x.purpose_id === p.id && x.channel === channel);
        if (!v) return h('td', {}, '—');
        return h('td', { class: `verdict ${v.verdict}` }, VERDICT_TEXT[v.verdict], v.event_ids.length ? ` (event ${v.event_ids.join(', ')})` : '');
      }),
    ),
  );
  const verdictTable = table(`Verdicts now for ${contact}, per purpose and channel`, ['Purpose', ...channels], verdictRows);

  const status = h('span', { class: 'error', role: 'alert' });
  const download = h('button', { type: 'button', class: 'secondary' }, 'Download proof');
  download.addEventListener('click', async () => {
    download.disabled = true;
    status.textContent = '';
    try {
      const text = await api.consentProofText(ctx.current.slug, contact);
      const name = `consent-proof-${contact.replace(/[^A-Za-z0-9@._+-]/g, '_')}-${new Date().toISOString().slice(0, 10)}.json`;
      const link = h('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/json' })), download: name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      const events = (JSON.parse(text) as { events: unknown[] }).events.length;
      ctx.announce(`The proof of ${contact} (${count(events, 'event')}) was saved as ${name}.`);
    } catch (err) {
      status.textContent = (err as Error).message;
    } finally {
      download.disabled = false;
    }
  });
  return [
    h('h3', {}, 'History'),
    historyTable.node,
    h('h3', {}, 'Verdicts now'),
    purposes.length ? verdictTable : h('p', {}, 'The instance has no purpose yet.'),
    h('p', { class: 'help' }, 'A deny wins over any allow; pending (unconfirmed) and expired events count for nothing.'),
    h('h3', {}, 'Proof of consent'),
    h('p', { class: 'help' }, 'Every event of this contact with its rules, the exact texts of the term versions it froze (with their SHA-256), and the declared and confirmation evidence: the JSON of GET /v1/consent-events/proof.'),
    h('div', { class: 'actions' }, download, status),
  ];
}
