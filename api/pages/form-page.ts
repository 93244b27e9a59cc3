import { rgb as contrastRatio } from 'wcag-contrast';
import type { FieldDefinition } from '../../domain/fields/types.js';
import { escapeHtml as escape, pageHtml } from './public-pages.js';

/**
 * The hosted form page (api/routes/form-pages.ts serves it at /f/{public_token}): the form as
 * GET /v1/forms/{id} describes it, drawn as plain HTML in the shell of every public page (no
 * script, no external resource but the form's own logo, never cached). Everything a form's
 * owner wrote (title, texts, labels, colours, custom CSS) reaches the page only through the
 * escapes below, so it is text or a checked value, never markup (docs/forms.md, Hosted page).
 *
 * Names of the posted fields: item_<id> per field and consent item, term_version_<id> (the term
 * version the page showed, as the API's term_version_id), submission_key (one per page drawn: a
 * double click or a reload of the answer is the same submission) and the honeypot, HONEYPOT.
 */

/** The trap field: hidden from people (off-screen, out of the tab order, aria-hidden), filled by bots. */
export const HONEYPOT = 'website';

/** A field item with its catalog field (undefined if the catalog lost it: drawn as text). */
export interface PageField {
  id: number;
  type: 'field';
  fieldKey: string;
  label: string;
  required: boolean;
  field: FieldDefinition | undefined;
}

/** A consent item with the term version it shows (the term's current one when the page is drawn). */
export interface PageConsent {
  id: number;
  type: 'consent';
  label: string;
  required: boolean;
  termVersionId: number;
  term: { name: string; version: string; body: string; documentUrl: string | null } | undefined;
}

export type PageItem = PageField | PageConsent | { id: number; type: 'separator' } | { id: number; type: 'text'; text: string };

export interface PageForm {
  name: string;
  /** The form's settings as stored: free-form, so every part is checked before use. */
  settings: unknown;
  items: PageItem[];
}

/** What a page drawn again after a refusal shows: the values sent, and the errors by item id ('' for the form as a whole). */
export interface PageState {
  values: Record<string, string>;
  errors: Map<number | '', string[]>;
  submissionKey: string;
}

interface Design {
  title: string;
  header: string | null;
  footer: string | null;
  primary: string;
  secondary: string | null;
  logoUrl: string | null;
  customCss: string | null;
}

const DEFAULT_PRIMARY = '#1f5fa8';
const COLOUR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
const MAX_CSS = 20_000;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const record = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** A colour the page may put in its style: #rgb or #rrggbb only; anything else is ignored (the default applies). */
export function safeColour(v: unknown): string | null {
  return typeof v === 'string' && COLOUR.test(v.trim()) ? v.trim().toLowerCase() : null;
}

/** An http(s) URL for an href or src, or null: no javascript:, data: or relative URL. */
export function safeUrl(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  try {
    const u = new URL(v.trim());
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

/**
 * The owner's CSS, made unable to leave the <style> element: inside it the HTML parser looks for
 * nothing but "</style", so every "<" is written as the CSS escape \3c (the same character to the
 * CSS parser inside a string, and not CSS syntax anywhere else). Clipped to MAX_CSS characters.
 * What the CSS can then do is restyle this page; it cannot load anything (the page's CSP allows
 * images only) and cannot run script.
 */
export function safeCss(v: unknown): string | null {
  const css = text(v);
  return css === null ? null : css.slice(0, MAX_CSS).replace(/</g, '\\3c ');
}

function rgbOf(hex: string): [number, number, number] {
  const h = hex.length === 4 ? [...hex.slice(1)].map((c) => c + c).join('') : hex.slice(1);
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}

/** The button's text colour on the primary colour: white or near-black, whichever reads better (WCAG ratio). */
function onColour(background: string): string {
  return contrastRatio(rgbOf(background), [255, 255, 255]) >= contrastRatio(rgbOf(background), [17, 17, 17]) ? '#ffffff' : '#111111';
}

/** What the frame of every page of a form reads: its name and settings. */
type FormFrame = Pick<PageForm, 'name' | 'settings'>;

function designOf(form: FormFrame): Design {
  const s = record(form.settings);
  const d = record(s.design);
  return {
    title: text(s.title) ?? form.name,
    header: text(s.header_text),
    footer: text(s.footer_text),
    primary: safeColour(d.primary_color) ?? DEFAULT_PRIMARY,
    secondary: safeColour(d.secondary_color),
    logoUrl: safeUrl(d.logo_url),
    customCss: safeCss(d.custom_css),
  };
}

function styleOf(d: Design): string {
  const css = [
    `.cf h1{color:${d.primary}}`,
    `.cf button{background:${d.primary};color:${onColour(d.primary)};border:0;border-radius:4px;font-size:1rem;cursor:pointer}`,
    `.cf input:focus,.cf select:focus{outline:2px solid ${d.primary};outline-offset:1px}`,
    d.secondary ? `.cf{border-top:6px solid ${d.secondary};padding-top:1rem}.cf hr{border-color:${d.secondary}}` : '',
    '.cf input[type=text],.cf input[type=email],.cf input[type=tel],.cf input[type=number],.cf input[type=date],.cf select{width:100%;box-sizing:border-box;padding:.4rem}',
    '.cf .item{margin-top:1rem}.cf .item label{margin-top:0}.cf .check{display:flex;gap:.5rem;align-items:flex-start}.cf .check label{display:inline}',
    '.cf .req{color:#b00020}.cf .error{color:#b00020;margin:.25rem 0 0}.cf .summary{border:2px solid #b00020;padding:.5rem 1rem}',
    '.cf .texts{white-space:pre-line}.cf details{margin:.25rem 0 0 1.75rem}.cf details div{white-space:pre-wrap;max-height:16rem;overflow:auto}',
    '.cf .doc{margin:.25rem 0 0 1.75rem}.cf .logo{max-height:4rem;max-width:100%}',
    // The trap: off-screen rather than display:none, which some bots know to skip.
    '.cf .hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}',
  ].join('');
  return `<style>${css}</style>${d.customCss ? `\n<style>${d.customCss}</style>` : ''}`;
}

/** The page's frame: the public shell, the form's design, its logo, title and header; `inner` is the page's own part. */
function framed(d: Design, inner: string): string {
  const logo = d.logoUrl ? `<img class="logo" src="${escape(d.logoUrl)}" alt="">\n` : '';
  const header = d.header ? `<p class="texts">${escape(d.header)}</p>\n` : '';
  const footer = d.footer ? `\n<footer><p class="texts">${escape(d.footer)}</p></footer>` : '';
  return pageHtml(d.title, `<main class="cf">\n${logo}<h1>${escape(d.title)}</h1>\n${header}${inner}${footer}\n</main>`, styleOf(d));
}

const AUTOCOMPLETE: Record<string, string> = {
  email: 'email',
  phone: 'tel',
  first_name: 'given-name',
  last_name: 'family-name',
  name: 'name',
  company: 'organization',
  country: 'country-name',
  postal_code: 'postal-code',
  city: 'address-level2',
};

const INPUT_TYPE: Record<string, string> = { text: 'text', email: 'email', phone: 'tel', number: 'number', date: 'date' };

function attrs(list: Array<[string, string | number | boolean | null | undefined]>): string {
  return list
    .filter(([, v]) => v !== null && v !== undefined && v !== false)
    .map(([k, v]) => (v === true ? ` ${k}` : ` ${k}="${escape(String(v))}"`))
    .join('');
}

function errorsOf(id: number, state: PageState | undefined): { html: string; describedBy: string | null } {
  const messages = state?.errors.get(id) ?? [];
  if (!messages.length) return { html: '', describedBy: null };
  return { html: messages.map((m, i) => `\n<p class="error" id="item-${id}-error-${i}">${escape(m)}</p>`).join(''), describedBy: messages.map((_, i) => `item-${id}-error-${i}`).join(' ') };
}

const requiredMark = (required: boolean) => (required ? ' <span class="req" aria-hidden="true">*</span>' : '');

function fieldHtml(item: PageField, state: PageState | undefined): string {
  const id = `item-${item.id}`;
  const name = `item_${item.id}`;
  const value = state?.values[name] ?? '';
  const err = errorsOf(item.id, state);
  const common: Array<[string, string | number | boolean | null | undefined]> = [
    ['id', id],
    ['name', name],
    ['required', item.required],
    ['aria-invalid', err.describedBy ? 'true' : null],
    ['aria-describedby', err.describedBy],
  ];
  const label = `<label for="${id}">${escape(item.label)}${requiredMark(item.required)}</label>`;
  const f = item.field;
  const type = f?.type ?? 'text';
  if (type === 'boolean') {
    const checked = value === 'true';
    return `<div class="item check"><input type="checkbox" value="true"${attrs([...common, ['checked', checked]])}>${label}</div>${err.html}`;
  }
  if (type === 'select') {
    const options = (f?.options ?? []).map((o) => `<option${attrs([['value', o], ['selected', o === value]])}>${escape(o)}</option>`).join('');
    return `<div class="item">${label}\n<select${attrs(common)}><option value="">-</option>${options}</select>${err.html}</div>`;
  }
  const input = attrs([
    ['type', INPUT_TYPE[type] ?? 'text'],
    ...common,
    ['value', value || null],
    ['autocomplete', AUTOCOMPLETE[item.fieldKey] ?? null],
    ['maxlength', f?.maxLength ?? null],
    // The catalog's pattern is matched whole, as the pattern attribute does (domain/fields/pattern.ts).
    ['pattern', f?.pattern ?? null],
    ['min', type === 'number' ? f?.min : null],
    ['max', type === 'number' ? f?.max : null],
    ['step', type === 'number' ? 'any' : null],
    ['inputmode', type === 'phone' ? 'tel' : null],
  ]);
  return `<div class="item">${label}\n<input${input}>${err.html}</div>`;
}

function consentHtml(item: PageConsent, state: PageState | undefined): string {
  const id = `item-${item.id}`;
  const name = `item_${item.id}`;
  const err = errorsOf(item.id, state);
  const box = attrs([
    ['type', 'checkbox'],
    ['id', id],
    ['name', name],
    ['value', 'true'],
    ['required', item.required],
    ['checked', state?.values[name] === 'true'],
    ['aria-invalid', err.describedBy ? 'true' : null],
    ['aria-describedby', [err.describedBy, item.term ? `${id}-terms` : null].filter(Boolean).join(' ') || null],
  ]);
  const version = `<input type="hidden" name="term_version_${item.id}" value="${item.termVersionId}">`;
  let terms = '';
  if (item.term) {
    const doc = safeUrl(item.term.documentUrl);
    terms =
      `\n<details id="${id}-terms"><summary>Read ${escape(item.term.name)} (version ${escape(item.term.version)})</summary><div>${escape(item.term.body)}</div></details>` +
      (doc ? `\n<p class="doc"><a href="${escape(doc)}" rel="noopener noreferrer" target="_blank">${escape(item.term.name)}: the full document</a></p>` : '');
  }
  return `<div class="item"><div class="check"><input${box}><label for="${id}">${escape(item.label)}${requiredMark(item.required)}</label></div>${version}${terms}${err.html}</div>`;
}

function itemHtml(item: PageItem, state: PageState | undefined): string {
  switch (item.type) {
    case 'field':
      return fieldHtml(item, state);
    case 'consent':
      return consentHtml(item, state);
    case 'separator':
      return '<hr>';
    case 'text':
      return `<p class="texts">${escape(item.text)}</p>`;
  }
}

/**
 * The form to fill: first drawn (no state) or drawn again with the values sent and the errors next
 * to their items. `preview`: the panel's preview of a definition (POST /v1/private/forms/preview),
 * the same page with its Send button disabled, so nothing is ever submitted from it.
 */
export function formPage(form: PageForm, state: PageState, opts: { preview?: boolean } = {}): string {
  const d = designOf(form);
  const all = [...state.errors.values()].reduce((n, list) => n + list.length, 0);
  const general = state.errors.get('') ?? [];
  const summary = all
    ? `<div class="summary" role="alert"><p>${all === 1 ? 'One answer needs' : `${all} answers need`} your attention.</p>` +
      (general.length ? `<ul>${general.map((m) => `<li>${escape(m)}</li>`).join('')}</ul>` : '') +
      `</div>\n`
    : '';
  const items = form.items.map((i) => itemHtml(i, state)).join('\n');
  const required = form.items.some((i) => (i.type === 'field' || i.type === 'consent') && i.required)
    ? '<p><span class="req" aria-hidden="true">*</span> required</p>\n'
    : '';
  return framed(
    d,
    `${summary}<form method="post">
${required}${items}
<div class="hp" aria-hidden="true"><label for="hp-${HONEYPOT}">Leave this field empty</label><input type="text" id="hp-${HONEYPOT}" name="${HONEYPOT}" tabindex="-1" autocomplete="off"></div>
<input type="hidden" name="submission_key" value="${escape(state.submissionKey)}">
<button type="submit"${opts.preview ? ' disabled' : ''}>Send</button>
</form>`,
  );
}

/** The answer to a submission: done, or (double confirmation) waiting for the link in the mail. */
export function formSentPage(form: FormFrame, status: 'confirmed' | 'pending'): string {
  const d = designOf(form);
  return framed(
    d,
    status === 'pending'
      ? `<section role="status"><h2>Check your mail</h2><p>We sent you a message with a link. Follow it to confirm: until then nothing you sent is in force.</p></section>`
      : `<section role="status"><h2>Thank you</h2><p>Your answers were received.</p></section>`,
  );
}

/** A refusal that is not about the answers (too many submissions, the form cannot take them now). */
export function formRefusedPage(form: FormFrame | undefined, heading: string, detail: string): string {
  const inner = `<section role="alert"><h2>${escape(heading)}</h2><p>${escape(detail)}</p></section>`;
  return form ? framed(designOf(form), inner) : pageHtml(heading, `<h1>${escape(heading)}</h1><p>${escape(detail)}</p>`);
}
