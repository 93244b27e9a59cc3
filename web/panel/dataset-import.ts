import * as api from './api.js';
import { field, h, select } from './dom.js';
import { count } from './kit.js';
import type { Context } from './context.js';

/**
 * A dataset's CSV import (docs/panel.md, the import's progress): the file chosen, its header read
 * in the browser to offer a mapping per column (a declared column, or skip), then the file POSTed
 * as it is while the page polls the import's progress into a progress bar; then the summary and
 * the rejects file. The whole file is never read by the page: only its first 64 KiB, for the header.
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

const key = () => Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');

export function importSection(ctx: Context, d: api.Dataset, columns: Array<{ field_key: string }>): Node[] {
  const error = h('p', { class: 'error', role: 'alert' });
  const file = h('input', { type: 'file', name: 'import-file', accept: '.csv,text/csv' });
  const mapping = h('div', { class: 'mapping' });
  const bar = h('div', { class: 'bar', role: 'progressbar', 'aria-label': 'Import progress', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0' }, h('div', { class: 'fill' }));
  const barText = h('p', { class: 'help' });
  const progress = h('div', { class: 'progress', hidden: true }, bar, barText);
  const summary = h('div', { class: 'summary' });
  const button = h('button', { type: 'submit', disabled: true }, 'Import');
  let selects: Array<[string, HTMLSelectElement]> = [];

  file.addEventListener('change', async () => {
    error.textContent = '';
    summary.replaceChildren();
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

  const setBar = (percent: number, text: string) => {
    bar.setAttribute('aria-valuenow', String(percent));
    bar.setAttribute('aria-valuetext', text);
    (bar.firstChild as HTMLElement).style.width = `${percent}%`;
    barText.textContent = text;
  };

  const form = h('form', { 'aria-labelledby': 'import' }, field('CSV file (UTF-8, comma-separated, header row first)', file), mapping, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    error.textContent = '';
    summary.replaceChildren();
    button.disabled = true;
    progress.hidden = false;
    setBar(0, 'Sending the file…');
    const map = Object.fromEntries(selects.map(([name, s]) => [name, s.value || null]));
    const k = key();
    const slug = ctx.current.slug;
    let over = false;
    const poll = async () => {
      while (!over) {
        try {
          const p = await api.importProgress(slug, k);
          if (over) break;
          if (p.status === 'merging') setBar(99, 'Every row read; writing the contacts…');
          else if (p.percent !== null) setBar(p.percent, `${p.percent} % read`);
        } catch {
          // Not started yet (404 until the request reaches the server).
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    void poll();
    try {
      const s = await api.sendCsv<Record<string, number | string | null>>(slug, `/v1/private/datasets/${d.id}/imports?key=${k}&map=${encodeURIComponent(JSON.stringify(map))}`, chosen);
      over = true;
      setBar(100, '100 % — done');
      const facts: Array<[string, string]> = [
        ['Rows', String(s['rows'])],
        ['Accepted', String(s['accepted'])],
        ['Rejected', String(s['rejected'])],
        ['New contacts', String(s['created'])],
        ['Updated', String(s['updated'])],
        ['Unchanged', String(s['unchanged'])],
        ['Repeated in the file', String(s['duplicates'])],
      ];
      const nodes: Node[] = [h('h3', {}, 'Summary'), h('dl', { class: 'facts' }, ...facts.flatMap(([t, v]) => [h('dt', {}, t), h('dd', {}, v)]))];
      if (s['rejects_url']) {
        const download = h('button', { type: 'button', class: 'secondary' }, 'Download rejects');
        download.addEventListener('click', async () => {
          try {
            const text = await api.importRejects(slug, k);
            const name = `dataset-${d.id}-rejects.csv`;
            const link = h('a', { href: URL.createObjectURL(new Blob([text], { type: 'text/csv' })), download: name, hidden: true });
            document.body.append(link);
            link.click();
            link.remove();
            setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
            ctx.announce(`The refused rows were saved as ${name}.`);
          } catch (err) {
            error.textContent = (err as Error).message;
          }
        });
        nodes.push(h('p', { class: 'help' }, 'Each refused row with its reason (row, code, field, rule, detail), then its own cells; a cell that a spreadsheet would run as a formula starts with an apostrophe.'), download);
      }
      summary.replaceChildren(...nodes);
      // The contacts shown before the import are stale: search again as the form says.
      document.querySelector<HTMLFormElement>('form[role=search]')?.requestSubmit();
      ctx.announce(`The import is done: ${count(Number(s['accepted']), 'row')} accepted, ${s['rejected']} rejected.`);
    } catch (err) {
      over = true;
      progress.hidden = true;
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
    progress,
    summary,
  ];
}
