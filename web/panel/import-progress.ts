import * as api from './api.js';
import { h } from './dom.js';
import type { Context } from './context.js';

/**
 * A CSV file sent to the API while its progress is shown (docs/panel.md, the import's progress):
 * a dataset's import (dataset-import.ts) and a list's upload (lists.ts). The page picks a key,
 * POSTs the file as it is with ?key=, and polls GET /v1/private/imports/{key} every 250 ms into a
 * progress bar (role progressbar, aria-valuenow and a drawn fill); the POST's answer is the
 * summary, drawn as facts, with a button saving the rejects file (the API's bytes) when rows were
 * refused. The whole file is never read by the page.
 */

export type Summary = Record<string, unknown>;

export interface ImportRunner {
  /** The bar and its text, then the summary: placed under the form. */
  nodes: Node[];
  /**
   * Sends `file` to the path `at(key)` answers and shows its progress; then the summary's `facts`
   * and, when rows were refused, *Download rejects* (saved as `rejectsName`). Answers the summary;
   * throws the API's refusal (the bar hidden again).
   */
  run(file: Blob, at: (key: string) => string, facts: (s: Summary) => Array<[string, string]>): Promise<Summary>;
  /** Takes the last run's bar and summary away (another file chosen). */
  clear(): void;
}

const POLL_EVERY_MS = 250;
const newKey = () => Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');

/** `label` names the bar ("Import progress"); `writing` says what the last step writes ("the contacts"); `error` shows a failed download of the rejects. */
export function importRunner(ctx: Context, o: { label: string; writing: string; rejectsName: string; error: HTMLElement }): ImportRunner {
  const bar = h('div', { class: 'bar', role: 'progressbar', 'aria-label': o.label, 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0' }, h('div', { class: 'fill' }));
  const barText = h('p', { class: 'help' });
  const progress = h('div', { class: 'progress', hidden: true }, bar, barText);
  const summary = h('div', { class: 'summary' });
  const setBar = (percent: number, text: string) => {
    bar.setAttribute('aria-valuenow', String(percent));
    bar.setAttribute('aria-valuetext', text);
    (bar.firstChild as HTMLElement).style.width = `${percent}%`;
    barText.textContent = text;
  };

  const download = (slug: string, key: string) => async () => {
    try {
      const text = await api.importRejects(slug, key);
      const link = h('a', { href: URL.createObjectURL(new Blob([text], { type: 'text/csv' })), download: o.rejectsName, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      ctx.announce(`The refused rows were saved as ${o.rejectsName}.`);
    } catch (err) {
      o.error.textContent = (err as Error).message;
    }
  };

  const run = async (file: Blob, at: (key: string) => string, facts: (s: Summary) => Array<[string, string]>): Promise<Summary> => {
    summary.replaceChildren();
    progress.hidden = false;
    setBar(0, 'Sending the file…');
    const key = newKey();
    const slug = ctx.current.slug;
    let over = false;
    const poll = async () => {
      while (!over) {
        try {
          const p = await api.importProgress(slug, key);
          if (over) break;
          if (p.status === 'merging') setBar(99, `Every row read; writing ${o.writing}…`);
          else if (p.percent !== null) setBar(p.percent, `${p.percent} % read`);
        } catch {
          // Not started yet (404 until the request reaches the server).
        }
        await new Promise((r) => setTimeout(r, POLL_EVERY_MS));
      }
    };
    void poll();
    let s: Summary;
    try {
      s = await api.sendCsv<Summary>(slug, at(key), file);
    } catch (err) {
      progress.hidden = true;
      throw err;
    } finally {
      over = true;
    }
    setBar(100, '100 % — done');
    const nodes: Node[] = [h('h3', {}, 'Summary'), h('dl', { class: 'facts' }, ...facts(s).flatMap(([t, v]) => [h('dt', {}, t), h('dd', {}, v)]))];
    if (s['rejects_url']) {
      const button = h('button', { type: 'button', class: 'secondary' }, 'Download rejects');
      button.addEventListener('click', download(slug, key));
      nodes.push(h('p', { class: 'help' }, 'Each refused row with its reason (row, code, field, rule, detail), then its own cells; a cell that a spreadsheet would run as a formula starts with an apostrophe.'), button);
    }
    summary.replaceChildren(...nodes);
    return s;
  };
  const clear = () => {
    progress.hidden = true;
    summary.replaceChildren();
  };
  return { nodes: [progress, summary], run, clear };
}
