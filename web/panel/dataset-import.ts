import * as api from './api.js';
import { field, h, select } from './dom.js';
import { count } from './kit.js';
import { importRunner } from './import-progress.js';
import type { Context } from './context.js';

/**
 * A dataset's CSV import (docs/panel.md, the import's progress): the file chosen, its header read
 * in the browser to offer a mapping per column (a declared column, or skip), then the file POSTed
 * as it is, its progress, summary and rejects file shown by import-progress.ts. The whole file is
 * never read by the page: only its first 64 KiB, for the header.
 */

/** The header row's cells (a simple CSV reading of the first line: quotes and doubled quotes). */
function headerCells(text: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') cells.push(cell), (cell = '');
    else if (c === '\n' || c === '\r') break;
    else cell += c;
  }
  cells.push(cell);
  return cells.map((x, i) => (i === 0 ? x.replace(/^\uFEFF/, '') : x));
}

export function importSection(ctx: Context, d: api.Dataset, columns: Array<{ field_key: string }>): Node[] {
  const error = h('p', { class: 'error', role: 'alert' });
  const file = h('input', { type: 'file', name: 'import-file', accept: '.csv,text/csv' });
  const mapping = h('div', { class: 'mapping' });
  const runner = importRunner(ctx, { label: 'Import progress', writing: 'the contacts', rejectsName: `dataset-${d.id}-rejects.csv`, error });
  const button = h('button', { type: 'submit', disabled: true }, 'Import');
  let selects: Array<[string, HTMLSelectElement]> = [];

  file.addEventListener('change', async () => {
    error.textContent = '';
    runner.clear();
    const chosen = file.files?.[0];
    if (!chosen) return;
    const header = headerCells(await chosen.slice(0, 64 * 1024).text());
    const options: Array<[string, string]> = [['', 'skip this column'], ...columns.map((c): [string, string] => [c.field_key, c.field_key])];
    selects = header.map((name, i) => [name, select(`map-${i}`, options, columns.some((c) => c.field_key === name) ? name : '')]);
    mapping.replaceChildren(
      h('p', { class: 'help' }, `${count(header.length, 'column')} in the file's header: choose the field each one fills.`),
      ...selects.map(([name, s]) => field(`Column “${name}”`, s)),
    );
    button.disabled = false;
  });

  const form = h('form', { 'aria-labelledby': 'import' }, field('CSV file (UTF-8, comma-separated, header row first)', file), mapping, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    error.textContent = '';
    button.disabled = true;
    const map = Object.fromEntries(selects.map(([name, s]) => [name, s.value || null]));
    try {
      const s = await runner.run(chosen, (key) => `/v1/private/datasets/${d.id}/imports?key=${key}&map=${encodeURIComponent(JSON.stringify(map))}`, (s) => [
        ['Rows', String(s['rows'])],
        ['Accepted', String(s['accepted'])],
        ['Rejected', String(s['rejected'])],
        ['New contacts', String(s['created'])],
        ['Updated', String(s['updated'])],
        ['Unchanged', String(s['unchanged'])],
        ['Repeated in the file', String(s['duplicates'])],
      ]);
      // The contacts shown before the import are stale: search again as the form says.
      document.querySelector<HTMLFormElement>('form[role=search]')?.requestSubmit();
      ctx.announce(`The import is done: ${count(Number(s['accepted']), 'row')} accepted, ${s['rejected']} rejected.`);
    } catch (err) {
      error.textContent = (err as Error).message;
    } finally {
      button.disabled = false;
    }
  });
  return [
    h('h2', { id: 'import' }, 'Import a CSV file'),
    h('p', { class: 'help' }, 'Each row is checked as an API contact and upserted by the identifier, all in one transaction: the import is whole or not at all. Refused rows go to the rejects file.'),
    form,
    error,
    ...runner.nodes,
  ];
}
