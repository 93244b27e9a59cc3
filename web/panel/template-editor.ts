import * as api from './api.js';
import { field, h, select } from './dom.js';
import type { Context } from './context.js';

/**
 * The structured editor of a template's page: the document's rows, their columns and modules as
 * a list (each module focusable as node-<uuid>, where a finding jumps), a small form for the
 * chosen module's texts, link, image source and alternative text and colours, and buttons to add,
 * move and remove rows and modules. Each change is a PATCH of the whole document (`save`), so the
 * server checks and renders it exactly as it would any other.
 */

type Json = Record<string, any>;
type Save = (config: unknown, button: HTMLButtonElement, done: string) => void;

/** The module the form edits, kept across the redraw a save causes. */
let chosen: string | undefined;

const FIELDS: Array<[string, string, 'text' | 'html']> = [
  ['text', 'Text', 'text'],
  ['html', 'Text (HTML)', 'html'],
  ['label', 'Button label', 'text'],
  ['href', 'Link (URL)', 'text'],
  ['src', 'Image source (URL)', 'text'],
  ['alt', 'Alternative text', 'text'],
];
const COLOURS: Array<[string, string]> = [
  ['color', 'Text colour'],
  ['background-color', 'Background colour'],
];

export function newUuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const x = [...b].map((n) => n.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The descriptor's content key (paragraph, button, image...): the key that is not style or computedStyle. */
const contentKey = (m: Json): string | undefined => Object.keys(m['descriptor'] ?? {}).find((k) => !['style', 'computedStyle', 'id', 'mobileStyle'].includes(k));
const kindOf = (m: Json): string => String(m['type'] ?? '').replace(/^mailup-bee-newsletter-modules-/, '') || 'module';
function summary(m: Json): string {
  const c = m['descriptor']?.[contentKey(m) ?? ''] ?? {};
  const raw = String(c.text ?? c.label ?? c.alt ?? c.html ?? c.src ?? '');
  const text = raw.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function move<T>(list: T[], i: number, by: number): void {
  const j = i + by;
  if (j < 0 || j >= list.length) return;
  [list[i], list[j]] = [list[j]!, list[i]!];
}

export async function structuredEditor(ctx: Context, config: Record<string, unknown>, save: Save): Promise<Node[]> {
  const rows = (config as Json)['page']?.['rows'];
  if (!Array.isArray(rows)) return [];
  let kinds: Array<{ kind: string }> = [];
  try {
    kinds = (await api.templateFormat(ctx.current.slug)).modules;
  } catch {
    kinds = [];
  }
  const change = (button: HTMLButtonElement, done: string, edit: (doc: Json) => void) => {
    const doc = structuredClone(config) as Json;
    edit(doc);
    save(doc, button, done);
  };
  const docRows = (doc: Json): Json[] => doc['page']['rows'];
  const button = (id: string, text: string, label: string, cls = 'secondary') => h('button', { type: 'button', id, class: `${cls} small`, 'aria-label': label }, text);

  const form = h('div', { id: 'module-form' });
  const allModules = new Map<string, Json>();

  const tree = h(
    'ol',
    { class: 'tree', 'aria-label': 'Rows' },
    ...rows.map((row: Json, r: number) => {
      const up = button(`row-up-${r}`, 'Up', `Up: move row ${r + 1} up`);
      up.addEventListener('click', () => change(up, `Row ${r + 1} moved up.`, (d) => move(docRows(d), r, -1)));
      const down = button(`row-down-${r}`, 'Down', `Down: move row ${r + 1} down`);
      down.addEventListener('click', () => change(down, `Row ${r + 1} moved down.`, (d) => move(docRows(d), r, 1)));
      const remove = button(`row-remove-${r}`, 'Remove', `Remove row ${r + 1}`, 'danger');
      remove.addEventListener('click', () => {
        if (confirm(`Remove row ${r + 1} and its modules?`)) change(remove, `Row ${r + 1} was removed.`, (d) => docRows(d).splice(r, 1));
      });
      const columns = (row['columns'] ?? []) as Json[];
      return h(
        'li',
        {},
        h('div', { class: 'actions' }, h('strong', {}, `Row ${r + 1}`), up, down, remove),
        h(
          'ol',
          { 'aria-label': `Columns of row ${r + 1}` },
          ...columns.map((col: Json, c: number) => {
            const modules = (col['modules'] ?? []) as Json[];
            const kind = select('kind', kinds.map((k): [string, string] => [k.kind, k.kind]), kinds.find((k) => k.kind === 'paragraph') ? 'paragraph' : (kinds[0]?.kind ?? ''), { id: `add-kind-${r}-${c}` });
            const add = button(`add-${r}-${c}`, 'Add module', `Add module to column ${c + 1} of row ${r + 1}`);
            add.addEventListener('click', async () => {
              try {
                const example = (await api.templateModule(ctx.current.slug, kind.value)).example;
                const module = { ...structuredClone(example), uuid: newUuid() };
                chosen = module.uuid as string;
                change(add, `A ${kind.value} module was added to row ${r + 1}.`, (d) => docRows(d)[r]!['columns'][c]['modules'].push(module));
              } catch (err) {
                ctx.announce((err as Error).message);
              }
            });
            return h(
              'li',
              {},
              h('span', {}, `Column ${c + 1}`),
              h(
                'ol',
                { 'aria-label': `Modules of column ${c + 1} of row ${r + 1}` },
                ...modules.map((m: Json, i: number) => {
                  // Documents saved by other tools may lack uuids: the module's place names it then.
                  const key = typeof m.uuid === 'string' ? m.uuid : `${r}-${c}-${i}`;
                  allModules.set(key, m);
                  const name = `${kindOf(m)} ${i + 1} of row ${r + 1}`;
                  const edit = h('button', { type: 'button', class: 'link', id: `node-${key}`, 'aria-pressed': chosen === key ? 'true' : 'false' }, `${kindOf(m)}${summary(m) ? `: ${summary(m)}` : ''}`);
                  edit.addEventListener('click', () => {
                    chosen = key;
                    for (const b of tree.querySelectorAll('[aria-pressed]')) b.setAttribute('aria-pressed', String(b === edit));
                    drawForm();
                    form.querySelector<HTMLElement>('input, textarea')?.focus();
                  });
                  const mu = button(`mod-up-${key}`, 'Up', `Up: move ${name} up`);
                  mu.addEventListener('click', () => change(mu, `${name} moved up.`, (d) => move(docRows(d)[r]!['columns'][c]['modules'], i, -1)));
                  const md = button(`mod-down-${key}`, 'Down', `Down: move ${name} down`);
                  md.addEventListener('click', () => change(md, `${name} moved down.`, (d) => move(docRows(d)[r]!['columns'][c]['modules'], i, 1)));
                  const rm = button(`mod-remove-${key}`, 'Remove', `Remove ${name}`, 'danger');
                  rm.addEventListener('click', () => change(rm, `${name} was removed.`, (d) => docRows(d)[r]!['columns'][c]['modules'].splice(i, 1)));
                  return h('li', {}, h('div', { class: 'actions' }, edit, mu, md, rm));
                }),
              ),
              h('div', { class: 'actions' }, field('Kind', kind), add),
            );
          }),
        ),
      );
    }),
  );

  const addRow = h('button', { type: 'button', id: 'add-row', class: 'secondary' }, 'Add a row');
  addRow.addEventListener('click', () =>
    change(addRow, 'A row with one column was added at the end.', (d) => {
      const model = docRows(d)[0];
      const row = model ? structuredClone(model) : { type: '', container: { style: {} }, content: { style: {} } };
      row.uuid = newUuid();
      row.columns = [{ uuid: newUuid(), 'grid-columns': 12, style: model?.['columns']?.[0]?.['style'] ?? {}, modules: [] }];
      docRows(d).push(row);
    }),
  );

  /** The chosen module's fields: what its content has among texts, links, image and colours. */
  function drawForm(): void {
    const m = chosen ? allModules.get(chosen) : undefined;
    if (!m) {
      form.replaceChildren(h('p', { class: 'help' }, 'Choose a module in the list to edit its text, link, image or colours.'));
      return;
    }
    const key = contentKey(m);
    const content: Json = key ? (m['descriptor'][key] ?? {}) : {};
    const inputs: Array<[string, HTMLInputElement | HTMLTextAreaElement, 'content' | 'style']> = [];
    const nodes: Node[] = [];
    for (const [name, label, kind] of FIELDS) {
      if (typeof content[name] !== 'string') continue;
      const control = kind === 'html' ? h('textarea', { name, rows: '4', id: `mod-${name}` }) : h('input', { type: 'text', name, id: `mod-${name}` });
      control.value = content[name];
      inputs.push([name, control, 'content']);
      nodes.push(kind === 'html' ? h('div', { class: 'field' }, h('label', { for: control.id }, label), control) : field(label, control as HTMLInputElement));
    }
    for (const [name, label] of COLOURS) {
      const value = content['style']?.[name];
      if (typeof value !== 'string') continue;
      const control = h('input', { type: 'text', name, id: `mod-${name}`, value });
      inputs.push([name, control, 'style']);
      nodes.push(field(`${label} (CSS)`, control));
    }
    const apply = h('button', { type: 'submit', id: 'mod-save' }, 'Save module');
    const f = h('form', { 'aria-labelledby': 'module-title' }, ...(nodes.length ? nodes : [h('p', {}, 'This module has no text, link, image or colour to edit here: use the JSON below.')]), nodes.length ? apply : null);
    f.addEventListener('submit', (event) => {
      event.preventDefault();
      change(apply, `The ${kindOf(m)} module was saved.`, (d) => {
        const place = where(d);
        const mod = place ? docRows(d)[place[0]]!['columns'][place[1]]['modules'][place[2]] : undefined;
        if (!mod) return;
        const content = mod['descriptor'][key!];
        for (const [name, control, at] of inputs) {
          if (at === 'content') content[name] = control.value;
          else content['style'][name] = control.value;
        }
      });
    });
    form.replaceChildren(h('h3', { id: 'module-title' }, `Module: ${kindOf(m)}`), f);
  }
  /** The chosen module's row, column and index in `doc`: by uuid, else by the place its key names. */
  function where(doc: Json): [number, number, number] | undefined {
    const rowsOf = docRows(doc);
    for (let r = 0; r < rowsOf.length; r++) {
      const cols = rowsOf[r]!['columns'] ?? [];
      for (let c = 0; c < cols.length; c++) {
        const mods = cols[c]['modules'] ?? [];
        for (let i = 0; i < mods.length; i++) if ((typeof mods[i].uuid === 'string' ? mods[i].uuid : `${r}-${c}-${i}`) === chosen) return [r, c, i];
      }
    }
    return undefined;
  }
  drawForm();

  return [
    h('h2', { id: 'editor-title' }, 'Editor'),
    h('p', { class: 'help' }, 'Rows, their columns and modules. Each change is saved at once and the preview redrawn.'),
    h('div', { class: 'editor' }, h('div', {}, tree, addRow), form),
  ];
}
