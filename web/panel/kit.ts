import { h } from './dom.js';
import type { Context } from './context.js';

/** What the resource pages share: the action runner and the table of a list. */

/**
 * Runs a change: on success announces `done` (the live region) and draws the page again; on a
 * refusal shows the API's reason in `error` (an alert under the heading) and calls `undo`.
 */
export async function act(ctx: Context, error: HTMLElement, what: () => Promise<unknown>, done: string, undo?: () => void): Promise<boolean> {
  error.textContent = '';
  ctx.announce('');
  try {
    await what();
    ctx.announce(done);
    ctx.refresh();
    return true;
  } catch (err) {
    undo?.();
    error.textContent = (err as Error).message;
    return false;
  }
}

/** A table with a caption, column headers and rows. */
export function table(caption: string, columns: string[], rows: HTMLTableRowElement[]): HTMLTableElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows),
  );
}

/** "3 senders", "1 sender". */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** A date-time of the API as the browser's local date and time, minutes only; an em dash for none. */
export function when(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The page's heading (focused on a new page) and, when the list could not be read, the reason. */
export const heading = (text: string): HTMLHeadingElement => h('h1', { tabindex: '-1' }, text);
export const failed = (title: string, err: unknown): Node[] => [heading(title), h('p', { class: 'error', role: 'alert' }, (err as Error).message)];

let nextNotice: string | undefined;
/** A message for the page a navigation is about to draw (the shell clears the live region on a new page). */
export function noticeForNextPage(message: string): void {
  nextNotice = message;
}
/** Called by a page as it is built: announces the pending message once the shell has drawn the page. */
export function flushNotice(ctx: Context): void {
  const message = nextNotice;
  nextNotice = undefined;
  if (message) setTimeout(() => ctx.announce(message));
}

/**
 * A secret shown once (a new API key, a webhook's signing secret): a read-only field with its
 * label, a Copy button, and a status saying what happened; where the clipboard is refused (an
 * insecure origin, a denied permission) the value is selected for the person to copy.
 */
export function secretField(id: string, label: string, secret: string, copyText: string): HTMLElement {
  const value = h('input', { type: 'text', readonly: true, id, value: secret, class: 'secret', spellcheck: 'false' });
  const copy = h('button', { type: 'button', class: 'secondary' }, copyText);
  const copied = h('span', { role: 'status', 'aria-live': 'polite' });
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copied.textContent = 'Copied.';
    } catch {
      value.select();
      copied.textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
    }
  });
  return h('div', { class: 'field' }, h('label', { for: id }, label), h('div', { class: 'actions' }, value, copy, copied));
}
