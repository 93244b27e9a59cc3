import * as api from './api.js';
import { field, h, select } from './dom.js';
import { failed, flushNotice, heading, noticeForNextPage, pagedTable, pager, when, type Paged } from './kit.js';
import type { Context } from './context.js';

/**
 * The Forms pages (#/forms, #/forms/new, #/forms/<id>): the instance's forms with their public
 * link and embed snippet; a form's builder (items from the field catalog, consent items with their
 * term and its current version, separators and text blocks, required flags and order; settings;
 * double confirmation, auto-reply, team notice; the dataset it feeds), a preview drawn from what
 * is being edited, activation and deletion, and its submissions with a CSV download. Save is the
 * API's whole-definition PUT (POST for a new form): the spec's rules are the API's, and the page
 * explains the ones that fire. A viewer sees the form and its submissions, no control.
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

/** The definition being edited: what PUT /v1/private/forms/{id} takes. */
interface Draft {
  name: string;
  kind: string;
  type: string;
  dataset_id: number | null;
  requires_confirmation: boolean;
  auto_reply_sender_id: number | null;
  auto_reply: api.FormMailSettings['auto_reply'];
  team_notice_emails: string[];
  settings: api.FormSettings;
  is_default: boolean;
  items: Array<Omit<api.FormItem, 'id' | 'field_type' | 'term_version_id'> & { id?: number }>;
}

function draftOf(f: api.Form | null, mail: api.FormMailSettings | null): Draft {
  if (!f) {
    return {
      name: '', kind: 'advanced', type: 'registration', dataset_id: null, requires_confirmation: false, auto_reply_sender_id: null,
      auto_reply: null, team_notice_emails: [], settings: {}, is_default: false, items: [{ type: 'field', field_key: 'email', required: true }],
    };
  }
  return {
    name: f.name, kind: f.kind, type: f.type, dataset_id: f.dataset_id, requires_confirmation: f.requires_confirmation, auto_reply_sender_id: f.auto_reply_sender_id,
    auto_reply: mail?.auto_reply ?? null, team_notice_emails: mail?.team_notice_emails ?? [], settings: f.settings ?? {}, is_default: f.is_default,
    items: f.items.map(({ id, type, field_key, term_id, channel, label, required, text }) => ({ id, type, field_key, term_id, channel, label, required, text })),
  };
}

/** The body of a save: no empty strings, the items in their order. */
function bodyOf(d: Draft, align: boolean): api.FormDefinition {
  const design = Object.fromEntries(Object.entries(d.settings.design ?? {}).filter(([, v]) => v));
  const settings = Object.fromEntries(Object.entries({ ...d.settings, design: Object.keys(design).length ? design : undefined }).filter(([, v]) => v));
  const items = d.items.map((i) => Object.fromEntries(Object.entries(i).filter(([k, v]) => v !== undefined && v !== null && v !== '' && !(k === 'required' && (i.type === 'separator' || i.type === 'text')))));
  return {
    name: d.name.trim(), kind: d.kind, type: d.type, dataset_id: d.dataset_id, requires_confirmation: d.requires_confirmation,
    auto_reply_sender_id: d.auto_reply_sender_id, auto_reply: d.auto_reply, team_notice_emails: d.team_notice_emails,
    settings: Object.keys(settings).length ? settings : null, is_default: d.is_default, items, ...(align ? { align_dataset_columns: true } : {}),
  };
}

async function builderPage(ctx: Context, id: number | null): Promise<Node[]> {
  const instance = ctx.current;
  const back = h('p', {}, h('a', { href: '#/forms' }, 'All forms'));
  let form: api.Form | null = null;
  let mail: api.FormMailSettings | null = null;
  let fields: api.CatalogField[];
  let terms: api.Term[];
  let senders: api.Sender[];
  let submissions: api.Page<api.Submission> | null = null;
  try {
    [form, mail, fields, terms, senders, submissions] = await Promise.all([
      id ? api.form(instance.slug, id) : null,
      id ? api.formMailSettings(instance.slug, id) : null,
      api.catalogFields(instance.slug).then((p) => p.data.filter((f) => f.is_active)),
      api.terms(instance.slug).then((p) => p.data),
      api.senders(instance.slug).then((p) => p.data),
      id ? api.formSubmissions(instance.slug, id) : null,
    ]);
  } catch (err) {
    return [back, ...failed(id ? 'Form' : 'New form', err)];
  }
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
  const preview = h('div', { class: 'form-preview', id: 'form-preview' });
  const itemList = h('ol', { class: 'form-items' });

  const drawPreview = (): void => {
    const s = draft.settings;
    const box = h('div', { class: 'preview-page' });
    if (s.design?.primary_color) box.style.borderTopColor = s.design.primary_color;
    if (s.design?.logo_url) box.append(h('p', { class: 'help' }, `Logo: ${s.design.logo_url}`));
    box.append(h('p', { class: 'preview-title' }, s.title || draft.name || 'Untitled form'));
    if (s.header_text) box.append(h('p', {}, s.header_text));
    for (const item of draft.items) {
      if (item.type === 'separator') box.append(h('hr', {}));
      else if (item.type === 'text') box.append(h('p', {}, item.text ?? ''));
      else if (item.type === 'field') box.append(h('p', {}, `${item.label || fieldName(item.field_key)}${item.required ? ' *' : ''}`, h('span', { class: 'preview-input' }, ' ')));
      else box.append(h('p', {}, `☐ ${item.label || termName(item.term_id)}${item.required ? ' *' : ''}`, h('br', {}), h('small', {}, termName(item.term_id))));
    }
    const submit = h('span', { class: 'preview-button' }, 'Submit');
    if (s.design?.primary_color) submit.style.backgroundColor = s.design.primary_color;
    box.append(submit);
    if (s.footer_text) box.append(h('p', {}, h('small', {}, s.footer_text)));
    preview.replaceChildren(
      h('p', { class: 'help' }, 'Drawn from what you are editing; custom CSS applies on the hosted page only. The hosted page itself refuses to be framed (clickjacking), so open the public link to see it.'),
      box,
    );
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
          label.addEventListener('input', () => { item.label = label.value || null; drawPreview(); });
          const req = h('input', { type: 'checkbox', id: `item-required-${i}`, checked: !!item.required });
          req.addEventListener('change', () => { item.required = req.checked; drawPreview(); });
          li.append(field(`Label of item ${i + 1}`, label), h('div', { class: 'check' }, req, h('label', { for: req.id }, `Item ${i + 1} required`)));
        }
        if (item.type === 'text') {
          const text = h('textarea', { id: `item-text-${i}`, rows: '2', maxlength: '10000' });
          text.value = item.text ?? '';
          text.addEventListener('input', () => { item.text = text.value; drawPreview(); });
          li.append(h('div', { class: 'field' }, h('label', { for: text.id }, `Text of item ${i + 1}`), text));
        }
        const move = (to: number) => () => {
          const [moved] = draft.items.splice(i, 1);
          draft.items.splice(to, 0, moved!);
          drawItems();
          drawPreview();
          document.getElementById(`item-${to < i ? 'up' : 'down'}-${to}`)?.focus();
        };
        const up = h('button', { type: 'button', class: 'secondary', id: `item-up-${i}`, disabled: i === 0, 'aria-label': `Move item ${i + 1} up` }, '↑');
        const down = h('button', { type: 'button', class: 'secondary', id: `item-down-${i}`, disabled: i === draft.items.length - 1, 'aria-label': `Move item ${i + 1} down` }, '↓');
        const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove item ${i + 1}` }, 'Remove');
        up.addEventListener('click', move(i - 1));
        down.addEventListener('click', move(i + 1));
        remove.addEventListener('click', () => { draft.items.splice(i, 1); drawItems(); drawPreview(); });
        li.append(h('div', { class: 'actions' }, up, down, remove));
        return li;
      }),
    );
  };

  drawItems();
  drawPreview();
  const title = form ? `Form ${form.name}` : 'New form';
  const nodes: Node[] = [back, heading(title), error];
  if (form) {
    nodes.push(
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'State'), h('dd', {}, form.is_active ? 'active: takes submissions' : 'inactive: submissions answer form_not_found'),
        h('dt', {}, 'Public link'), h('dd', {}, h('a', { href: hostedUrl(form), rel: 'noopener noreferrer', target: '_blank', id: 'hosted-link' }, hostedUrl(form))),
        h('dt', {}, 'Form id'), h('dd', {}, String(form.id)),
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
        ctx.refresh();
        setTimeout(() => ctx.announce(saved.is_active ? `${saved.name} is inactive.` : `${saved.name} is active: it takes submissions.`));
      } catch (err) {
        error.textContent = (err as Error).message;
      }
    });
    const del = h('button', { type: 'button', class: 'danger', id: 'form-delete' }, 'Delete form');
    del.addEventListener('click', async () => {
      if (!confirm(`Delete ${saved.name}? It leaves the listings and takes no submission; its submissions and consent events keep naming it.`)) return;
      try {
        await api.deleteForm(instance.slug, saved.id);
        noticeForNextPage(`The form ${saved.name} was deleted.`);
        location.hash = '#/forms';
      } catch (err) {
        error.textContent = (err as Error).message;
      }
    });
    nodes.push(h('div', { class: 'actions' }, toggle, del));
  }

  nodes.push(h('h2', { id: 'items-title' }, 'Items'), h('p', { class: 'help' }, 'In display order. Consent items show their term and the version a submission freezes.'), itemList);
  if (admin) nodes.push(...addControls(draft, fields, terms, () => { drawItems(); drawPreview(); }));
  if (admin) nodes.push(...settingsForm(ctx, draft, senders, drawPreview, error, form));
  nodes.push(h('h2', { id: 'preview-title' }, 'Preview'), preview);
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
  addConsent.addEventListener('click', () => { draft.items.push({ type: 'consent', term_id: Number(termChoice.value), channel: channel.value, required: false }); redraw(); });
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

function settingsForm(ctx: Context, draft: Draft, senders: api.Sender[], redraw: () => void, error: HTMLElement, form: api.Form | null): Node[] {
  const text = (label: string, value: string | undefined, set: (v: string) => void, attrs: Record<string, string> = {}): HTMLElement => {
    const input = h('input', { type: 'text', autocomplete: 'off', ...attrs });
    input.value = value ?? '';
    input.addEventListener('input', () => { set(input.value); redraw(); });
    return field(label, input);
  };
  const area = (label: string, id: string, value: string | undefined, set: (v: string) => void): HTMLElement => {
    const input = h('textarea', { id, rows: '3' });
    input.value = value ?? '';
    input.addEventListener('input', () => { set(input.value); redraw(); });
    return h('div', { class: 'field' }, h('label', { for: id }, label), input);
  };
  const check = (label: string, id: string, value: boolean, set: (v: boolean) => void): HTMLElement => {
    const box = h('input', { type: 'checkbox', id, checked: value });
    box.addEventListener('change', () => set(box.checked));
    return h('div', { class: 'check' }, box, h('label', { for: id }, label));
  };
  const s = draft.settings;
  const design = (s.design ??= {});
  const kind = select('form-kind', [['advanced', 'advanced: any catalog field'], ['consent', 'consent: identifiers and consents only']], draft.kind);
  kind.addEventListener('change', () => (draft.kind = kind.value));
  const type = select('form-type', [['registration', 'registration'], ['update', 'update']], draft.type);
  type.addEventListener('change', () => (draft.type = type.value));
  const sender = select('form-sender', [['', 'none'], ...senders.map((x): [string, string] => [String(x.id), `${x.name} <${x.email_address}>`])], String(draft.auto_reply_sender_id ?? ''));
  sender.addEventListener('change', () => (draft.auto_reply_sender_id = sender.value ? Number(sender.value) : null));
  const reply = (draft.auto_reply ??= {});
  let align = false;
  const save = h('button', { type: 'button', id: 'form-save' }, form ? 'Save form' : 'Create form');
  save.addEventListener('click', async () => {
    error.replaceChildren();
    ctx.announce('');
    save.disabled = true;
    const body = bodyOf({ ...draft, auto_reply: reply.subject || reply.text || reply.html || reply.template_id ? reply : null }, align);
    try {
      const saved = form ? await api.updateForm(ctx.current.slug, form.id, body) : await api.createForm(ctx.current.slug, body);
      noticeForNextPage(`The form ${saved.name} was saved.`);
      if (form) ctx.refresh();
      else location.hash = `#/forms/${saved.id}`;
    } catch (err) {
      const code = err instanceof api.ApiError ? err.problem.code : '';
      error.append(h('p', {}, (err as Error).message), RULE_HELP[code] ? h('p', { class: 'rule-help' }, RULE_HELP[code]!) : '');
      save.disabled = false;
      error.scrollIntoView?.();
    }
  });
  return [
    h('h2', { id: 'settings-title' }, 'Settings'),
    text('Form name', draft.name, (v) => (draft.name = v), { id: 'form-name', maxlength: '255', required: 'true' }),
    field('Kind', kind),
    field('Type', type),
    text('Page title', s.title, (v) => (s.title = v), { maxlength: '255' }),
    area('Header text', 'form-header', s.header_text, (v) => (s.header_text = v)),
    area('Footer text', 'form-footer', s.footer_text, (v) => (s.footer_text = v)),
    text('Primary colour (#rrggbb)', design.primary_color, (v) => (design.primary_color = v), { pattern: '#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?' }),
    text('Secondary colour (#rrggbb)', design.secondary_color, (v) => (design.secondary_color = v), { pattern: '#[0-9A-Fa-f]{3}([0-9A-Fa-f]{3})?' }),
    text('Logo URL (https)', design.logo_url, (v) => (design.logo_url = v), { class: 'wide' }),
    area('Custom CSS (hosted page only)', 'form-css', design.custom_css, (v) => (design.custom_css = v)),
    h('h3', {}, 'Confirmation, auto-reply and team notice'),
    check('Double confirmation: consents count once the contact confirms by mail (needs a required email field)', 'form-confirm', draft.requires_confirmation, (v) => (draft.requires_confirmation = v)),
    field('Sender of the auto-reply and the confirmation mail', sender),
    text('Auto-reply subject', reply.subject, (v) => (reply.subject = v || undefined), { maxlength: '254' }),
    area('Auto-reply text', 'form-reply-text', reply.text, (v) => (reply.text = v || undefined)),
    text('Team notice addresses (comma-separated)', draft.team_notice_emails.join(', '), (v) => (draft.team_notice_emails = v.split(',').map((x) => x.trim()).filter(Boolean)), { class: 'wide' }),
    h('h3', {}, 'Dataset'),
    text('Dataset id the submissions feed (empty: none)', draft.dataset_id ? String(draft.dataset_id) : '', (v) => (draft.dataset_id = Number(v) > 0 ? Number(v) : null), { inputmode: 'numeric', id: 'form-dataset' }),
    check('Add the columns the dataset requires as required items (instead of refusing)', 'form-align', false, (v) => (align = v)),
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
