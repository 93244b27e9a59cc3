import * as api from './api.js';
import { field, h, select } from './dom.js';
import { deleteButton, failed, flushNotice, heading, noticeForNextPage, pagedTable, pager, when, type Paged } from './kit.js';
import type { Context } from './context.js';

/**
 * The Forms pages (#/forms, #/forms/new, #/forms/<id>): the instance's forms with their public
 * link and embed snippet; a form's builder (items from the field catalog, consent items with their
 * term and its current version, separators and text blocks, required flags and order; settings;
 * double confirmation, the auto-reply written here or by a published template, team notice; the
 * dataset it feeds, picked from the instance's), a live preview of the hosted page itself (drawn
 * by the API from the draft, shown in a sandboxed frame), activation and deletion, and its
 * submissions with a CSV download. Save is the API's whole-definition PUT (POST for a new form):
 * the spec's rules are the API's, and the page explains the ones that fire and shows a 422's
 * errors at their fields. A viewer sees the form and its submissions, no control.
 */

/** What the page says when the API answers one of the spec's form rules. */
const RULE_HELP: Record<string, string> = {
  consent_channel_not_covered:
    'A consent item is given on a channel (mail, sms, wsp) that identifies the contact by a field the form lacks: add the email field for mail, the phone field for sms or wsp.',
  form_dataset_columns_not_collected:
    'The dataset this form feeds requires columns the form does not collect as required items. Add them as required fields, or tick “Add the columns the dataset requires” and save again.',
  form_confirmation_email_missing: 'Double confirmation sends a mail to the email field: add the email field and make it required.',
  form_name_taken: 'Another form has this name (names are compared ignoring case and accents).',
};

export async function formsPage(ctx: Context): Promise<Node[]> {
  const [, , id] = location.hash.split('/');
  if (id === 'new') return builderPage(ctx, null);
  if (Number(id) > 0) return builderPage(ctx, Number(id));
  return listPage(ctx);
}

const hostedUrl = (f: api.Form): string => `${location.origin}/f/${f.public_token}`;
const embedSnippet = (f: api.Form): string =>
  `<iframe src="${hostedUrl(f)}" title="${f.name.replace(/[&"<>]/g, '')}" width="100%" height="640" style="border:0"></iframe>`;

/** A copy button for `text` (with a fallback: the text selected, for Ctrl+C, where the clipboard is not allowed). */
function copyButton(ctx: Context, label: string, text: string, target: HTMLInputElement | HTMLTextAreaElement): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary', 'aria-label': label }, 'Copy');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      ctx.announce('Copied.');
    } catch {
      target.select();
      ctx.announce('Selected: press Ctrl+C to copy.');
    }
  });
  return button;
}

async function listPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const title = `Forms of ${instance.name}`;
  let forms: Paged<api.Form>;
  try {
    forms = await pagedTable(ctx, {
      id: 'forms',
      noun: ['form'],
      columns: ['Name', 'Kind', 'State', 'Items', 'Public link', 'Embed snippet'],
      read: (n) => api.forms(instance.slug, n),
      row: (f, i) => {
        const snippet = embedSnippet(f);
        const code = h('textarea', { readonly: true, rows: '2', id: `embed-${i}`, class: 'snippet', 'aria-label': `Embed snippet of ${f.name}` });
        code.value = snippet;
        return h(
          'tr',
          f.is_active ? {} : { class: 'lifted' },
          h('th', { scope: 'row' }, h('a', { href: `#/forms/${f.id}` }, f.name)),
          h('td', {}, f.kind),
          h('td', {}, f.is_active ? 'active' : 'inactive'),
          h('td', {}, String(f.items.length)),
          h('td', {}, h('a', { href: hostedUrl(f), rel: 'noopener noreferrer', target: '_blank' }, `/f/${f.public_token}`)),
          h('td', {}, code, copyButton(ctx, `Copy the embed snippet of ${f.name}`, snippet, code)),
        );
      },
    });
  } catch (err) {
    return failed(title, err);
  }
  flushNotice(ctx);
  const admin = instance.role !== 'viewer';
  const nodes: Node[] = [heading(title)];
  if (!admin) nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner builds, activates and deletes forms.'));
  else nodes.push(h('p', {}, h('a', { href: '#/forms/new', class: 'button' }, 'New form')));
  nodes.push(
    h('p', { class: 'help' }, 'Each form has a hosted page anyone can open (the public link) and can be embedded in a site with the snippet. A deactivated form takes no submission.'),
    forms.node,
  );
  return nodes;
}

/** How the auto-reply is written: not at all, here (subject, text, HTML), or by a template (its subject unless one is given). */
interface Reply {
  mode: 'none' | 'written' | 'template';
  subject: string;
  text: string;
  html: string;
  templateId: number | null;
}

/** The definition being edited: what PUT /v1/private/forms/{id} takes (the auto-reply as the builder holds it). */
interface Draft {
  name: string;
  kind: string;
  type: string;
  dataset_id: number | null;
  requires_confirmation: boolean;
  auto_reply_sender_id: number | null;
  reply: Reply;
  team_notice_emails: string[];
  settings: api.FormSettings;
  is_default: boolean;
  items: Array<Omit<api.FormItem, 'id' | 'field_type' | 'term_version_id'> & { id?: number }>;
  /** align_dataset_columns: the save adds (and the preview draws) the items the dataset requires. */
  align: boolean;
}

function replyOf(r: api.FormMailSettings['auto_reply']): Reply {
  const mode = !r ? 'none' : r.template_id ? 'template' : r.subject || r.text || r.html ? 'written' : 'none';
  return { mode, subject: r?.subject ?? '', text: r?.text ?? '', html: r?.html ?? '', templateId: r?.template_id ?? null };
}

function draftOf(f: api.Form | null, mail: api.FormMailSettings | null): Draft {
  if (!f) {
    return {
      name: '', kind: 'advanced', type: 'registration', dataset_id: null, requires_confirmation: false, auto_reply_sender_id: null,
      reply: replyOf(null), team_notice_emails: [], settings: {}, is_default: false, items: [{ type: 'field', field_key: 'email', required: true }], align: false,
    };
  }
  return {
    name: f.name, kind: f.kind, type: f.type, dataset_id: f.dataset_id, requires_confirmation: f.requires_confirmation, auto_reply_sender_id: f.auto_reply_sender_id,
    reply: replyOf(mail?.auto_reply ?? null), team_notice_emails: mail?.team_notice_emails ?? [], settings: f.settings ?? {}, is_default: f.is_default,
    items: f.items.map(({ id, type, field_key, term_id, channel, label, required, text }) => ({ id, type, field_key, term_id, channel, label, required, text })),
    align: false,
  };
}

/** The auto-reply of a save: only what its mode uses (the other mode's drafts are left out, not sent). */
function autoReplyOf(r: Reply): api.FormMailSettings['auto_reply'] {
  if (r.mode === 'template') return r.templateId ? { template_id: r.templateId, ...(r.subject ? { subject: r.subject } : {}) } : null;
  if (r.mode === 'none') return null;
  const written = Object.fromEntries(Object.entries({ subject: r.subject, text: r.text, html: r.html }).filter(([, v]) => v));
  return Object.keys(written).length ? written : null;
}

/** The body of a save (and of a preview): no empty strings, the items in their order. */
function bodyOf(d: Draft): api.FormDefinition {
  const design = Object.fromEntries(Object.entries(d.settings.design ?? {}).filter(([, v]) => v));
  const settings = Object.fromEntries(Object.entries({ ...d.settings, design: Object.keys(design).length ? design : undefined }).filter(([, v]) => v));
  const items = d.items.map((i) => Object.fromEntries(Object.entries(i).filter(([k, v]) => v !== undefined && v !== null && v !== '' && !(k === 'required' && (i.type === 'separator' || i.type === 'text')))));
  return {
    name: d.name.trim(), kind: d.kind, type: d.type, dataset_id: d.dataset_id, requires_confirmation: d.requires_confirmation,
    auto_reply_sender_id: d.auto_reply_sender_id, auto_reply: autoReplyOf(d.reply), team_notice_emails: d.team_notice_emails,
    settings: Object.keys(settings).length ? settings : null, is_default: d.is_default, items, ...(d.align ? { align_dataset_columns: true } : {}),
  };
}

/**
 * The API's 422 errors shown at their fields: each control registered with the pointer it edits
 * gets the messages of that pointer (and below it) in a paragraph it is described by, and
 * aria-invalid. Shown after a save and after each preview (the preview answers the same 422s),
 * cleared when the next answer no longer has them.
 */
function fieldErrors() {
  const slots: Array<{ pointer: string; control: HTMLElement; slot: HTMLElement; describedBy: string }> = [];
  return {
    slot(pointer: string, control: HTMLElement): HTMLElement {
      const slot = h('p', { class: 'field-error', id: `error-${pointer.slice(1).replace(/\W+/g, '-')}`, hidden: true });
      slots.push({ pointer, control, slot, describedBy: control.getAttribute('aria-describedby') ?? '' });
      return slot;
    },
    show(errors: NonNullable<api.Problem['errors']>): HTMLElement | undefined {
      let first: HTMLElement | undefined;
      for (const s of slots) {
        const mine = errors.filter((e) => e.pointer === s.pointer || e.pointer?.startsWith(`${s.pointer}/`));
        s.slot.textContent = mine.map((e) => e.message ?? e.code ?? '').join(' ');
        s.slot.hidden = !mine.length;
        if (mine.length) {
          first ??= s.control;
          s.control.setAttribute('aria-invalid', 'true');
          s.control.setAttribute('aria-describedby', `${s.describedBy} ${s.slot.id}`.trim());
        } else {
          s.control.removeAttribute('aria-invalid');
          if (s.describedBy) s.control.setAttribute('aria-describedby', s.describedBy);
          else s.control.removeAttribute('aria-describedby');
        }
      }
      return first;
    },
  };
}
type FieldErrors = ReturnType<typeof fieldErrors>;

/** The data the builder offers choices from. */
interface Choices {
  fields: api.CatalogField[];
  terms: api.Term[];
  senders: api.Sender[];
  datasets: api.Dataset[];
  templates: api.TemplateSummary[];
}

async function builderPage(ctx: Context, id: number | null): Promise<Node[]> {
  const instance = ctx.current;
  const back = h('p', {}, h('a', { href: '#/forms' }, 'All forms'));
  let form: api.Form | null = null;
  let mail: api.FormMailSettings | null = null;
  let choices: Choices;
  let submissions: api.Page<api.Submission> | null = null;
  try {
    const [f, m, fields, terms, senders, datasets, templates, subs] = await Promise.all([
      id ? api.form(instance.slug, id) : null,
      id ? api.formMailSettings(instance.slug, id) : null,
      api.catalogFields(instance.slug).then((p) => p.data.filter((f) => f.is_active)),
      api.terms(instance.slug).then((p) => p.data),
      api.senders(instance.slug).then((p) => p.data),
      api.datasets(instance.slug).then((p) => p.data),
      api.templates(instance.slug).then((p) => p.data),
      id ? api.formSubmissions(instance.slug, id) : null,
    ]);
    [form, mail, submissions] = [f, m, subs];
    choices = { fields, terms, senders, datasets, templates };
  } catch (err) {
    return [back, ...failed(id ? 'Form' : 'New form', err)];
  }
  const { fields, terms } = choices;
  flushNotice(ctx);
  const admin = instance.role !== 'viewer';
  const draft = draftOf(form, mail);
  const termName = (termId?: number): string => {
    const t = terms.find((x) => x.id === termId);
    if (!t) return `term ${termId}`;
    const current = t.versions.find((v) => v.is_current);
    return `${t.name}, version ${current ? current.version : 'none current (no submission can pass until one is made current)'}`;
  };
  const fieldName = (key?: string): string => fields.find((f) => f.field_key === key)?.name ?? key ?? '';

  const error = h('div', { class: 'error', role: 'alert', id: 'form-error' });
  const errors = fieldErrors();
  const itemList = h('ol', { class: 'form-items' });

  // ---- The preview: the hosted page itself, as the API draws it from the draft (POST
  // /v1/private/forms/preview), in a frame that grants nothing (sandbox=""): the form's custom CSS
  // and texts never run in, nor reach, the panel's document. Asked again once edits pause.
  const frame = h('iframe', { sandbox: '', title: 'Preview of the hosted page', class: 'preview form-frame', id: 'form-preview-frame', height: '640', referrerpolicy: 'no-referrer' });
  const previewNote = h('p', { class: 'help', id: 'form-preview-note' }, 'Drawing the preview…');
  let asked = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drawPreview = async (): Promise<void> => {
    const mine = ++asked;
    try {
      // The name is the page's title only when no title is set: an unnamed new form is previewed as "New form".
      const { html } = await api.previewForm(instance.slug, { ...bodyOf(draft), name: draft.name.trim() || 'New form' });
      if (mine !== asked) return;
      frame.srcdoc = html;
      previewNote.textContent = admin
        ? 'The hosted page as your changes make it (Send is disabled here). Saving keeps them.'
        : 'The hosted page as contacts see it (Send is disabled here).';
      errors.show([]);
    } catch (err) {
      if (mine !== asked) return;
      previewNote.textContent = `Not updated: ${(err as Error).message}`;
      if (err instanceof api.ApiError) errors.show(err.problem.errors ?? []);
    }
  };
  const changed = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => void drawPreview(), 400);
  };

  const drawItems = (): void => {
    itemList.replaceChildren(
      ...draft.items.map((item, i) => {
        const what =
          item.type === 'field' ? `Field ${fieldName(item.field_key)} (${item.field_key})` : item.type === 'consent' ? `Consent: ${termName(item.term_id)} on ${item.channel ?? 'mail'}` : item.type === 'separator' ? 'Separator' : 'Text block';
        const li = h('li', {}, h('span', { class: 'item-what' }, what));
        if (!admin) {
          if (item.required) li.append(' (required)');
          if (item.type === 'text') li.append(`: ${item.text ?? ''}`);
          return li;
        }
        if (item.type === 'field' || item.type === 'consent') {
          const label = h('input', { type: 'text', maxlength: '1000', id: `item-label-${i}`, autocomplete: 'off' });
          label.value = item.label ?? '';
          label.addEventListener('input', () => { item.label = label.value || null; changed(); });
          const req = h('input', { type: 'checkbox', id: `item-required-${i}`, checked: !!item.required });
          req.addEventListener('change', () => { item.required = req.checked; changed(); });
          li.append(field(`Label of item ${i + 1}`, label), h('div', { class: 'check' }, req, h('label', { for: req.id }, `Item ${i + 1} required`)));
        }
        if (item.type === 'text') {
          const text = h('textarea', { id: `item-text-${i}`, rows: '2', maxlength: '10000' });
          text.value = item.text ?? '';
          text.addEventListener('input', () => { item.text = text.value; changed(); });
          li.append(h('div', { class: 'field' }, h('label', { for: text.id }, `Text of item ${i + 1}`), text));
        }
        const move = (to: number) => () => {
          const [moved] = draft.items.splice(i, 1);
          draft.items.splice(to, 0, moved!);
          drawItems();
          changed();
          document.getElementById(`item-${to < i ? 'up' : 'down'}-${to}`)?.focus();
        };
        const up = h('button', { type: 'button', class: 'secondary', id: `item-up-${i}`, disabled: i === 0, 'aria-label': `Move item ${i + 1} up` }, '↑');
        const down = h('button', { type: 'button', class: 'secondary', id: `item-down-${i}`, disabled: i === draft.items.length - 1, 'aria-label': `Move item ${i + 1} down` }, '↓');
        const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove item ${i + 1}` }, 'Remove');
        up.addEventListener('click', move(i - 1));
        down.addEventListener('click', move(i + 1));
        remove.addEventListener('click', () => { draft.items.splice(i, 1); drawItems(); changed(); });
        li.append(h('div', { class: 'actions' }, up, down, remove));
        return li;
      }),
    );
  };

  drawItems();
  void drawPreview();
  const title = form ? `Form ${form.name}` : 'New form';
  const nodes: Node[] = [back, heading(title), error];
  if (form) {
    const fed = choices.datasets.find((d) => d.id === form!.dataset_id);
    nodes.push(
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'State'), h('dd', {}, form.is_active ? 'active: takes submissions' : 'inactive: submissions answer form_not_found'),
        h('dt', {}, 'Public link'), h('dd', {}, h('a', { href: hostedUrl(form), rel: 'noopener noreferrer', target: '_blank', id: 'hosted-link' }, hostedUrl(form))),
        h('dt', {}, 'Form id'), h('dd', {}, String(form.id)),
        h('dt', {}, 'Feeds the dataset'), h('dd', {}, form.dataset_id === null ? 'none' : fed ? `${fed.name} (${fed.channel?.join(', ') || 'no channel'})` : `dataset ${form.dataset_id}`),
        h('dt', {}, 'Updated'), h('dd', {}, when(form.updated_at)),
      ),
    );
  }
  if (!admin) nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner edits, activates and deletes forms.'));
  if (admin && form) {
    const saved = form;
    const toggle = h('button', { type: 'button', id: 'form-toggle', class: saved.is_active ? 'danger' : 'secondary' }, saved.is_active ? 'Deactivate form' : 'Activate form');
    toggle.addEventListener('click', async () => {
      error.textContent = '';
      try {
        await api.setFormActive(instance.slug, saved.id, !saved.is_active);
        await ctx.refresh();
        ctx.announce(saved.is_active ? `${saved.name} is inactive.` : `${saved.name} is active: it takes submissions.`);
      } catch (err) {
        error.textContent = (err as Error).message;
      }
    });
    const del = deleteButton({
      id: 'form-delete',
      label: 'Delete form',
      question: `Delete ${saved.name}? It leaves the listings and takes no submission; its submissions and consent events keep naming it.`,
      remove: () => api.deleteForm(instance.slug, saved.id),
      done: `The form ${saved.name} was deleted.`,
      list: '#/forms',
      error,
    });
    nodes.push(h('div', { class: 'actions' }, toggle, del));
  }

  const editing: Node[] = [h('h2', { id: 'items-title' }, 'Items'), h('p', { class: 'help' }, 'In display order. Consent items show their term and the version a submission freezes.'), itemList];
  if (admin) editing.push(...addControls(draft, fields, terms, () => { drawItems(); changed(); }));
  if (admin) editing.push(...settingsForm(ctx, draft, choices, changed, error, errors, form));
  const previewing = h('section', { class: 'form-preview', 'aria-labelledby': 'preview-title' }, h('h2', { id: 'preview-title' }, 'Preview'), previewNote, frame);
  nodes.push(h('div', { class: 'form-builder' }, h('div', {}, ...editing), previewing));
  if (form && submissions) nodes.push(...submissionsSection(ctx, form, submissions, termName));
  return nodes;
}

function addControls(draft: Draft, fields: api.CatalogField[], terms: api.Term[], redraw: () => void): Node[] {
  const fieldChoice = select('add-field', fields.map((f) => [f.field_key, `${f.name} (${f.field_key})`]), 'email');
  const addField = h('button', { type: 'button', class: 'secondary', id: 'add-field' }, 'Add field');
  addField.addEventListener('click', () => { draft.items.push({ type: 'field', field_key: fieldChoice.value, required: false }); redraw(); });
  const termChoice = select('add-term', terms.filter((t) => t.is_active).map((t) => [String(t.id), `${t.name} (${t.channels.join(', ')})`]), '');
  const channel = select('add-channel', [['mail', 'mail'], ['sms', 'sms'], ['wsp', 'wsp']], 'mail');
  const addConsent = h('button', { type: 'button', class: 'secondary', id: 'add-consent', disabled: !terms.length }, 'Add consent');
  addConsent.addEventListener('click', () => { draft.items.push({ type: 'consent', term_id: Number(termChoice.value), channel: channel.value as api.FormItem['channel'], required: false }); redraw(); });
  const addSeparator = h('button', { type: 'button', class: 'secondary' }, 'Add separator');
  addSeparator.addEventListener('click', () => { draft.items.push({ type: 'separator' }); redraw(); });
  const addText = h('button', { type: 'button', class: 'secondary' }, 'Add text block');
  addText.addEventListener('click', () => { draft.items.push({ type: 'text', text: 'Text' }); redraw(); });
  return [
    h('h3', { id: 'add-title' }, 'Add an item'),
    h('div', { class: 'inline' }, field('Catalog field', fieldChoice), addField),
    terms.length ? h('div', { class: 'inline' }, field('Consent term', termChoice), field('Channel', channel), addConsent) : h('p', {}, 'No consent term yet: create one on the Consent page.'),
    h('div', { class: 'inline' }, addSeparator, addText),
  ];
}

/** The dataset the submissions feed: a select of the instance's datasets, and what the chosen one requires of the form. */
function datasetPicker(ctx: Context, draft: Draft, datasets: api.Dataset[], changed: () => void, errors: FieldErrors): HTMLElement[] {
  const options: Array<[string, string]> = [['', 'none'], ...datasets.map((d): [string, string] => [String(d.id), `${d.name} (${d.channel?.join(', ') || 'no channel'})${d.is_active ? '' : ', inactive'}`])];
  if (draft.dataset_id && !datasets.some((d) => d.id === draft.dataset_id)) options.push([String(draft.dataset_id), `dataset ${draft.dataset_id}`]);
  const picker = select('form-dataset', options, String(draft.dataset_id ?? ''), { id: 'form-dataset', 'aria-describedby': 'form-dataset-needs' });
  const needs = h('p', { class: 'help', id: 'form-dataset-needs' });
  let asked = 0;
  // What the rule form_dataset_columns_not_collected will ask, said before it fires.
  const showNeeds = async (): Promise<void> => {
    const mine = ++asked;
    if (!draft.dataset_id) {
      needs.textContent = 'The submissions feed no dataset.';
      return;
    }
    try {
      const d = await api.dataset(ctx.current.slug, draft.dataset_id);
      if (mine !== asked) return;
      const required = [d.identity_field ?? '', ...(d.columns ?? []).filter((c) => c.required && c.field_key !== d.identity_field).map((c) => c.field_key)].filter(Boolean);
      needs.textContent = `Each submission becomes a contact of ${d.name}, recognised by ${d.identity_field}. The form must collect as required items: ${required.join(', ')}.`;
    } catch {
      if (mine === asked) needs.textContent = '';
    }
  };
  picker.addEventListener('change', () => {
    draft.dataset_id = picker.value ? Number(picker.value) : null;
    void showNeeds();
    changed();
  });
  void showNeeds();
  const box = field('Dataset the submissions feed', picker);
  box.append(needs, errors.slot('/dataset_id', picker));
  return [box];
}

/** The auto-reply: none, written here (subject, text, HTML), or a published template (its own subject unless one is given). */
function autoReplyControls(draft: Draft, templates: api.TemplateSummary[], changed: () => void, errors: FieldErrors): HTMLElement[] {
  const r = draft.reply;
  const published = templates.filter((t) => t.status === 'public');
  const options: Array<[string, string]> = published.map((t) => [String(t.id), t.subject ? `${t.name} (subject: ${t.subject})` : t.name]);
  if (r.templateId && !published.some((t) => t.id === r.templateId)) {
    const t = templates.find((x) => x.id === r.templateId);
    options.push([String(r.templateId), t ? `${t.name} (draft: not sent until published)` : `template ${r.templateId} (not found)`]);
  }
  const template = select('form-reply-template', options, String(r.templateId ?? options[0]?.[0] ?? ''), { id: 'form-reply-template' });
  template.addEventListener('change', () => { r.templateId = Number(template.value) || null; changed(); });
  const text = (label: string, id: string, value: string, set: (v: string) => void, pointer: string, attrs: Record<string, string> = {}): HTMLElement => {
    const input = h('input', { type: 'text', id, autocomplete: 'off', ...attrs });
    input.value = value;
    input.addEventListener('input', () => { set(input.value); changed(); });
    const box = field(label, input);
    box.append(errors.slot(pointer, input));
    return box;
  };
  const area = (label: string, id: string, value: string, set: (v: string) => void, pointer: string): HTMLElement => {
    const input = h('textarea', { id, rows: '4' });
    input.value = value;
    input.addEventListener('input', () => { set(input.value); changed(); });
    return h('div', { class: 'field' }, h('label', { for: id }, label), input, errors.slot(pointer, input));
  };
  const written = h('div', { id: 'reply-written' },
    area('Auto-reply text', 'form-reply-text', r.text, (v) => (r.text = v), '/auto_reply/text'),
    area('Auto-reply HTML', 'form-reply-html', r.html, (v) => (r.html = v), '/auto_reply/html'),
  );
  const byTemplate = h('div', { id: 'reply-template' });
  if (options.length) {
    const box = field('Template of the auto-reply', template);
    box.append(errors.slot('/auto_reply/template_id', template));
    byTemplate.append(box);
  }
  const subjectHelp = h('p', { class: 'help', id: 'form-reply-subject-help' });
  const subject = text('Auto-reply subject', 'form-reply-subject', r.subject, (v) => (r.subject = v), '/auto_reply/subject', { maxlength: '254', 'aria-describedby': subjectHelp.id });
  subject.append(subjectHelp);
  const show = (): void => {
    written.hidden = r.mode !== 'written';
    byTemplate.hidden = r.mode !== 'template';
    subject.hidden = r.mode === 'none';
    subjectHelp.textContent = r.mode === 'template' ? 'Empty: the template’s own subject.' : 'Empty: the form’s name. Merge tags: the answers by field key, such as {{email}}, and {{form_name}}.';
  };
  const mode = (value: Reply['mode'], label: string, disabled = false): HTMLElement => {
    const radio = h('input', { type: 'radio', name: 'form-reply-mode', id: `form-reply-mode-${value}`, value, checked: r.mode === value, disabled });
    radio.addEventListener('change', () => {
      r.mode = value;
      if (value === 'template' && !r.templateId) r.templateId = Number(template.value) || null;
      show();
      changed();
    });
    return h('div', { class: 'check' }, radio, h('label', { for: radio.id }, label));
  };
  show();
  return [
    h('fieldset', { class: 'choice' },
      h('legend', {}, 'Auto-reply'),
      mode('none', 'None'),
      mode('written', 'Written here: subject, text and HTML'),
      mode('template', 'A published template', !options.length),
    ),
    options.length ? '' : h('p', { class: 'help' }, 'No published template yet: publish one on the Templates page to send it as the auto-reply.'),
    byTemplate, subject, written,
  ].filter((n): n is HTMLElement => !!n);
}

function settingsForm(ctx: Context, draft: Draft, choices: Choices, changed: () => void, error: HTMLElement, errors: FieldErrors, form: api.Form | null): Node[] {
  const text = (label: string, value: string | undefined, set: (v: string) => void, attrs: Record<string, string> = {}, pointer?: string): HTMLElement => {
    const input = h('input', { type: 'text', autocomplete: 'off', ...attrs });
    input.value = value ?? '';
    input.addEventListener('input', () => { set(input.value); changed(); });
    const box = field(label, input);
    if (pointer) box.append(errors.slot(pointer, input));
    return box;
  };
  const area = (label: string, id: string, value: string | undefined, set: (v: string) => void): HTMLElement => {
    const input = h('textarea', { id, rows: '3' });
    input.value = value ?? '';
    input.addEventListener('input', () => { set(input.value); changed(); });
    return h('div', { class: 'field' }, h('label', { for: id }, label), input);
  };
  const check = (label: string, id: string, value: boolean, set: (v: boolean) => void): HTMLElement => {
    const box = h('input', { type: 'checkbox', id, checked: value });
    box.addEventListener('change', () => { set(box.checked); changed(); });
    return h('div', { class: 'check' }, box, h('label', { for: id }, label));
  };
  const s = draft.settings;
  const design = (s.design ??= {});
  const kind = select('form-kind', [['advanced', 'advanced: any catalog field'], ['consent', 'consent: identifiers and consents only']], draft.kind);
  kind.addEventListener('change', () => { draft.kind = kind.value; changed(); });
  const type = select('form-type', [['registration', 'registration'], ['update', 'update']], draft.type);
  type.addEventListener('change', () => (draft.type = type.value));
  const sender = select('form-sender', [['', 'none'], ...choices.senders.map((x): [string, string] => [String(x.id), `${x.name} <${x.email_address}>`])], String(draft.auto_reply_sender_id ?? ''));
  sender.addEventListener('change', () => { draft.auto_reply_sender_id = sender.value ? Number(sender.value) : null; changed(); });
  const senderBox = field('Sender of the auto-reply and the confirmation mail', sender);
  senderBox.append(errors.slot('/auto_reply_sender_id', sender));
  const save = h('button', { type: 'button', id: 'form-save' }, form ? 'Save form' : 'Create form');
  save.addEventListener('click', async () => {
    error.replaceChildren();
    ctx.announce('');
    save.disabled = true;
    const body = bodyOf(draft);
    try {
      const saved = form ? await api.updateForm(ctx.current.slug, form.id, body) : await api.createForm(ctx.current.slug, body);
      noticeForNextPage(`The form ${saved.name} was saved.`);
      if (form) await ctx.refresh();
      else location.hash = `#/forms/${saved.id}`;
    } catch (err) {
      const code = err instanceof api.ApiError ? err.problem.code : '';
      error.append(h('p', {}, (err as Error).message), RULE_HELP[code] ? h('p', { class: 'rule-help' }, RULE_HELP[code]!) : '');
      save.disabled = false;
      const invalid = errors.show(err instanceof api.ApiError ? (err.problem.errors ?? []) : []);
      if (invalid) invalid.focus();
      else error.scrollIntoView?.();
    }
  });
  return [
    h('h2', { id: 'settings-title' }, 'Settings'),
    text('Form name', draft.name, (v) => (draft.name = v), { id: 'form-name', maxlength: '255', required: 'true' }, '/name'),
    field('Kind', kind),
    field('Type', type),
    text('Page title', s.title, (v) => (s.title = v), { maxlength: '255' }),
    area('Header text', 'form-header', s.header_text, (v) => (s.header_text = v)),
    area('Footer text', 'form-footer', s.footer_text, (v) => (s.footer_text = v)),
    text('Primary colour (#rrggbb)', design.primary_color, (v) => (design.primary_color = v), { pattern: '#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?' }, '/settings/design/primary_color'),
    text('Secondary colour (#rrggbb)', design.secondary_color, (v) => (design.secondary_color = v), { pattern: '#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?' }, '/settings/design/secondary_color'),
    text('Logo URL (https)', design.logo_url, (v) => (design.logo_url = v), { class: 'wide' }, '/settings/design/logo_url'),
    area('Custom CSS (hosted page only)', 'form-css', design.custom_css, (v) => (design.custom_css = v)),
    h('h3', {}, 'Confirmation, auto-reply and team notice'),
    check('Double confirmation: consents count once the contact confirms by mail (needs a required email field)', 'form-confirm', draft.requires_confirmation, (v) => (draft.requires_confirmation = v)),
    senderBox,
    ...autoReplyControls(draft, choices.templates, changed, errors),
    text('Team notice addresses (comma-separated)', draft.team_notice_emails.join(', '), (v) => (draft.team_notice_emails = v.split(',').map((x) => x.trim()).filter(Boolean)), { class: 'wide' }, '/team_notice_emails'),
    h('h3', {}, 'Dataset'),
    ...datasetPicker(ctx, draft, choices.datasets, changed, errors),
    check('Add the columns the dataset requires as required items (instead of refusing)', 'form-align', draft.align, (v) => (draft.align = v)),
    check('Default form of the instance', 'form-default', draft.is_default, (v) => (draft.is_default = v)),
    h('div', { class: 'actions' }, save),
  ];
}

function submissionsSection(ctx: Context, form: api.Form, page: api.Page<api.Submission>, termName: (id?: number) => string): Node[] {
  const download = h('button', { type: 'button', class: 'secondary', id: 'submissions-csv' }, 'Download CSV');
  download.addEventListener('click', async () => {
    try {
      const csv = await api.formSubmissionsCsv(ctx.current.slug, form.id);
      const link = h('a', { href: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })), download: `form-${form.id}-submissions.csv`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
    } catch (err) {
      ctx.announce((err as Error).message);
    }
  });
  // The newest first, 100 a page (the CSV has them all).
  const listed = pager(
    ctx,
    {
      id: 'submissions',
      keep: null,
      noun: ['submission'],
      columns: ['Id', 'Received', 'Source', 'Status', 'Values', 'Consents'],
      read: (n) => api.formSubmissions(ctx.current.slug, form.id, n),
      row: (s) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, String(s.id)),
          h('td', {}, when(s.created_at)),
          h('td', {}, s.source === 'form' ? 'hosted page' : 'API (form_api)'),
          h('td', {}, s.status),
          h('td', {}, Object.entries(s.field_values).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('; ')),
          h('td', {}, s.consents.map((c) => `${termName(c.term_id)}: ${c.status} (event ${c.event_id})`).join('; ') || '—'),
        ),
    },
    page,
  );
  return [
    h('h2', { id: 'submissions-title' }, 'Submissions'),
    h('div', { class: 'actions' }, download),
    listed.node,
  ];
}
