import * as api from './api.js';
import { field, h, select } from './dom.js';
import { actFrom, deleteButton, failed, flushNotice, heading, refocusAfterDraw, when } from './kit.js';
import { structuredEditor } from './template-editor.js';
import type { Context } from './context.js';

/**
 * One template's page (#/templates/<id>): its facts; the rendered HTML previewed at 600 and 375 px
 * side by side, each in an iframe with sandbox="" (no allow-scripts, no allow-same-origin: the
 * template's HTML gets an opaque origin and never runs script in the panel's); the findings, each
 * jumping to its module; the design document as JSON (Save is a PATCH of the whole document, a
 * 422's errors listed with their pointers) and the structured editor (template-editor.ts); a
 * test send to a member. While the JSON is edited the preview and findings follow it (validate,
 * nothing stored). Published or external templates are shown, not edited.
 */

export async function templatePage(ctx: Context, id: number): Promise<Node[]> {
  const instance = ctx.current;
  const back = h('p', {}, h('a', { href: '#/templates' }, 'All templates'));
  let t: api.Template;
  let members: api.Member[];
  try {
    let listed: Array<api.Member | api.Invitation>;
    [t, listed] = await Promise.all([api.template(instance.slug, id), api.members(instance.slug)]);
    // An invitation not accepted is no member: the sandbox would not send to it.
    members = listed.filter((m): m is api.Member => m.status === 'member');
  } catch (err) {
    return [back, ...failed('Template', err)];
  }
  const admin = instance.role !== 'viewer';
  const editable = admin && t.provider === 'native' && t.status === 'draft';
  const error = h('p', { class: 'error', role: 'alert' });
  const problems = h('ul', { class: 'problems', 'aria-label': 'What the server refused' });

  /** Runs a change; on success draws the page again (focus back on `button`), on a refusal shows the API's reason. */
  const run = (button: HTMLButtonElement, what: () => Promise<unknown>, done: string): Promise<boolean> => {
    problems.replaceChildren();
    return actFrom(ctx, error, button, what, done, button.id, (err) => {
      const fields = err instanceof api.ApiError ? (err.problem.errors ?? []) : [];
      problems.replaceChildren(...fields.map((f) => jumpItem(`${f.pointer ?? ''}: ${f.message ?? f.code ?? ''}`, (f.pointer ?? '').replace(/^\/config/, ''), null)));
    });
  };

  // ---- The preview: two sandboxed frames, drawn from the stored html or from a validate answer.
  const frame = (width: number, label: string) =>
    h('iframe', { sandbox: '', title: `Preview at ${width} px (${label})`, width: String(width), height: '720', class: 'preview', 'data-width': String(width), referrerpolicy: 'no-referrer' });
  const wide = frame(600, 'desktop');
  const narrow = frame(375, 'mobile');
  const previewNote = h('p', { class: 'help', id: 'preview-note' });
  const showPreview = (html: string | null, note: string) => {
    const doc = html ?? '<p>No design: nothing to show.</p>';
    wide.srcdoc = doc;
    narrow.srcdoc = doc;
    previewNote.textContent = note;
  };
  showPreview(t.html, `The stored version, updated ${when(t.updated_at)}.`);

  // ---- The findings, each a button that takes the focus to its module.
  const findingsList = h('ul', { class: 'findings', id: 'findings' });
  const showFindings = (findings: api.Finding[]) =>
    findingsList.replaceChildren(
      ...(findings.length ? findings.map((f) => jumpItem(`${f.level}: ${f.message} (${f.rule})`, f.pointer, f.uuid)) : [h('li', {}, 'No warning or suggestion.')]),
    );
  showFindings(t.findings);

  // ---- The JSON editor: the whole document; Save is a PATCH of it.
  const json = h('textarea', { id: 'template-json', name: 'config', rows: '22', spellcheck: 'false', class: 'json', readonly: !editable });
  json.value = t.config ? JSON.stringify(t.config, null, 2) : '';

  /** Where a finding or an error points: the editor's module when it shows one, else the JSON text of its node. */
  function jumpTo(pointer: string, uuid: string | null): void {
    const target = uuid ?? uuidAt(parseJson(json.value), pointer);
    // A module without a uuid is named by its place (template-editor.ts): rows/R/columns/C/modules/I.
    const place = /^\/page\/rows\/(\d+)\/columns\/(\d+)\/modules\/(\d+)/.exec(pointer);
    const node = (target ? document.getElementById(`node-${target}`) : null) ?? (place ? document.getElementById(`node-${place[1]}-${place[2]}-${place[3]}`) : null);
    if (node) {
      node.scrollIntoView({ block: 'center' });
      node.focus();
      return;
    }
    const at = target ? json.value.indexOf(`"uuid": "${target}"`) : -1;
    json.focus();
    if (at >= 0) {
      json.setSelectionRange(at, at + target!.length + 10);
      const line = json.value.slice(0, at).split('\n').length;
      json.scrollTop = Math.max(0, (line - 3) * parseFloat(getComputedStyle(json).lineHeight || '20'));
    }
  }
  function jumpItem(text: string, pointer: string, uuid: string | null): HTMLLIElement {
    const button = h('button', { type: 'button', class: 'link' }, text);
    button.addEventListener('click', () => jumpTo(pointer, uuid));
    return h('li', {}, button);
  }

  const nodes: Node[] = [back, heading(`Template ${t.name}`), error, problems];
  nodes.push(
    h(
      'dl',
      { class: 'facts' },
      ...fact('State', t.status === 'public' ? 'published: sent by any send; unpublish it to edit' : 'draft: sent only by a send with test_mode'),
      ...fact('Kind', t.provider === 'external' ? 'external: from an editor no longer offered, read-only (copy it from the list to start a native one)' : 'native (design document)'),
      ...fact('Subject', t.subject ?? '—'),
      ...fact('Preheader', t.preheader ?? '—'),
      ...fact('Updated', when(t.updated_at)),
    ),
  );

  if (admin) {
    const publish = h('button', { type: 'button', id: 'tpl-publish', class: 'secondary' }, t.status === 'public' ? 'Unpublish' : 'Publish');
    publish.addEventListener('click', () =>
      run(publish, () => api.publishTemplate(instance.slug, id, t.status !== 'public'), t.status === 'public' ? `${t.name} is a draft again: editable.` : `${t.name} is published.`),
    );
    const remove = deleteButton({
      id: 'tpl-delete',
      label: 'Delete template',
      question: `Delete the template ${t.name}? Sends already accepted keep their content; its name becomes free.`,
      remove: () => api.deleteTemplate(instance.slug, id),
      done: `The template ${t.name} was deleted.`,
      list: '#/templates',
      error,
    });
    nodes.push(h('div', { class: 'actions' }, publish, remove));
  } else {
    nodes.push(h('p', {}, 'Your role here is viewer: an admin or owner edits, publishes, tests and deletes templates.'));
  }

  nodes.push(
    h('h2', { id: 'preview-title' }, 'Preview'),
    h(
      'p',
      { class: 'help' },
      'The HTML as a mail client gets it, at 600 and 375 px wide. Each frame is sandboxed: the template’s HTML cannot run script or reach this page.',
    ),
    previewNote,
    h('div', { class: 'previews', role: 'group', 'aria-labelledby': 'preview-title' }, h('figure', {}, wide, h('figcaption', {}, '600 px')), h('figure', {}, narrow, h('figcaption', {}, '375 px'))),
    h('h2', { id: 'findings-title' }, 'Findings'),
    h('p', { class: 'help' }, 'Warnings and suggestions about the design; choose one to go to its module.'),
    findingsList,
  );

  if (editable) {
    nodes.push(...detailsForm(t, (patch, button) => run(button, () => api.updateTemplate(instance.slug, id, patch), 'The details were saved.')));
    /** A PATCH of the whole document (the structured editor's changes too). */
    const saveDocument = (config: unknown, button: HTMLButtonElement, done: string) => run(button, () => api.updateTemplate(instance.slug, id, { config }), done);
    if (t.config) nodes.push(...(await structuredEditor(ctx, t.config, (config, button, done) => saveDocument(config, button, done))));
    nodes.push(...jsonEditor(json, error, problems, jumpItem, showPreview, showFindings, ctx, (button) => {
      const config = parseJson(json.value);
      if (config === undefined) {
        error.textContent = 'The document is not JSON: fix it before saving.';
        return;
      }
      void saveDocument(config, button, 'The design was saved: the preview shows the stored version.');
    }));
  } else if (t.config) {
    nodes.push(h('h2', { id: 'json-title' }, 'Design document (JSON)'), h('div', { class: 'field' }, h('label', { for: json.id }, 'The design document, read-only'), json));
  }

  if (admin) nodes.push(...testSendForm(ctx, t, members));

  flushNotice(ctx);
  refocusAfterDraw();
  return nodes;
}

const fact = (term: string, value: Node | string): Node[] => [h('dt', {}, term), h('dd', {}, value)];

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The uuid of the deepest node with one on the way to `pointer` (RFC 6901, into the document). */
function uuidAt(doc: unknown, pointer: string): string | null {
  let node = doc;
  let found: string | null = null;
  for (const raw of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') break;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
    const uuid = node && typeof node === 'object' ? (node as Record<string, unknown>)['uuid'] : undefined;
    if (typeof uuid === 'string') found = uuid;
  }
  return found;
}

function detailsForm(t: api.Template, save: (patch: api.TemplateFields, button: HTMLButtonElement) => void): Node[] {
  const name = h('input', { type: 'text', name: 'name', value: t.name, required: true, maxlength: '255', id: 'tpl-name' });
  const subject = h('input', { type: 'text', name: 'subject', value: t.subject ?? '', maxlength: '254', id: 'tpl-subject' });
  const preheader = h('input', { type: 'text', name: 'preheader', value: t.preheader ?? '', maxlength: '255', id: 'tpl-preheader' });
  const button = h('button', { type: 'submit', id: 'tpl-save-details' }, 'Save details');
  const form = h('form', { 'aria-labelledby': 'details-title', class: 'inline' }, field('Name', name), field('Subject', subject), field('Preheader', preheader), button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    save({ name: name.value, subject: subject.value || null, preheader: preheader.value || null }, button);
  });
  return [h('h2', { id: 'details-title' }, 'Name, subject and preheader'), form];
}

function jsonEditor(
  json: HTMLTextAreaElement,
  error: HTMLElement,
  problems: HTMLElement,
  jumpItem: (text: string, pointer: string, uuid: string | null) => HTMLLIElement,
  showPreview: (html: string | null, note: string) => void,
  showFindings: (findings: api.Finding[]) => void,
  ctx: Context,
  save: (button: HTMLButtonElement) => void,
): Node[] {
  const button = h('button', { type: 'button', id: 'tpl-save-json' }, 'Save design');
  button.addEventListener('click', () => save(button));
  // The preview follows the text as it is typed: a validate (nothing stored) once typing pauses.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let asked = 0;
  json.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const config = parseJson(json.value);
      if (config === undefined) {
        error.textContent = 'Not JSON yet: the preview waits for a document that parses.';
        return;
      }
      const mine = ++asked;
      try {
        const checked = await api.validateTemplate(ctx.current.slug, { config });
        if (mine !== asked) return;
        error.textContent = '';
        problems.replaceChildren();
        showPreview(checked.html, 'Unsaved changes: Save design to keep them.');
        showFindings(checked.findings);
      } catch (err) {
        if (mine !== asked) return;
        error.textContent = (err as Error).message;
        const fields = err instanceof api.ApiError ? (err.problem.errors ?? []) : [];
        problems.replaceChildren(...fields.map((f) => jumpItem(`${f.pointer ?? ''}: ${f.message ?? ''}`, (f.pointer ?? '').replace(/^\/config/, ''), null)));
      }
    }, 600);
  });
  return [
    h('h2', { id: 'json-title' }, 'Design document (JSON)'),
    h('p', { class: 'help' }, 'The whole document, in the format of GET /v1/mail-templates/format. The preview follows your changes; Save design stores them (a refused document lists each error with its place).'),
    h('div', { class: 'field' }, h('label', { for: json.id }, 'The design document'), json),
    h('p', {}, button),
  ];
}

/** Send a test: the template to a member's address, from the instance's sandbox sender. */
function testSendForm(ctx: Context, t: api.Template, members: api.Member[]): Node[] {
  const instance = ctx.current;
  const to = select('to', members.filter((m) => !m.disabled).map((m): [string, string] => [m.email, m.email]), ctx.user.email, { id: 'tpl-test-to' });
  const button = h('button', { type: 'submit', id: 'tpl-test-send' }, 'Send a test');
  const outcome = h('p', { role: 'status', 'aria-live': 'polite', id: 'tpl-test-outcome' });
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h('form', { 'aria-labelledby': 'test-title', class: 'inline' }, field('To (a member of the instance)', to), button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    outcome.textContent = '';
    button.disabled = true;
    try {
      const sent = await api.testSendTemplate(instance.slug, t.id, { to: to.value });
      outcome.textContent = `Sent to ${sent.mails[0]?.to ?? to.value} from ${sent.from} (mail ${sent.mails[0]?.mail_id ?? ''}): it arrives within seconds.`;
    } catch (err) {
      error.textContent = (err as Error).message;
    }
    button.disabled = false;
  });
  return [
    h('h2', { id: 'test-title' }, 'Send a test'),
    h('p', { class: 'help' }, `From the instance’s sandbox sender, which sends only to the instance’s members. ${t.status === 'draft' ? 'A draft goes as a test_mode send.' : ''}`),
    form,
    error,
    outcome,
  ];
}
