import { h } from './dom.js';
import { PAGE_SIZE, type Page } from './api.js';
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
    await ctx.refresh();
    ctx.announce(done);
    return true;
  } catch (err) {
    undo?.();
    error.textContent = (err as Error).message;
    return false;
  }
}

/** The id of the control that ran the last change on a page of one resource: the page drawn again gives it the focus back. */
let refocus: string | undefined;

/**
 * Runs a change from `button` on a page of one resource (a template, a webhook, a consent term):
 * the button disabled while it runs; on success the page drawn again with the focus back on the
 * control `focus` (the button, unless said: the redraw makes it anew) and `done` announced; on a
 * refusal the API's reason in `error`, `refused` given the error, and the button usable again.
 */
export async function actFrom(
  ctx: Context,
  error: HTMLElement,
  button: HTMLButtonElement,
  what: () => Promise<unknown>,
  done: string,
  focus = button.id,
  refused?: (err: unknown) => void,
): Promise<boolean> {
  error.textContent = '';
  ctx.announce('');
  button.disabled = true;
  try {
    await what();
    refocus = focus;
    await ctx.refresh();
    ctx.announce(done);
    return true;
  } catch (err) {
    error.textContent = (err as Error).message;
    refused?.(err);
    button.disabled = false;
    return false;
  }
}

/** The control `actFrom` asks the page being drawn to focus, once (undefined: the drawing follows no change of its). */
export function takeRefocus(): string | undefined {
  const id = refocus;
  refocus = undefined;
  return id;
}

/** After the shell has put the page in place (it clears the live region and moves the focus first). */
export const afterDraw = (fn: () => void): void => void setTimeout(fn);

/** Gives the focus back to the control that ran the change this drawing follows, once the page is in place. */
export function refocusAfterDraw(): void {
  const again = takeRefocus();
  if (again) afterDraw(() => document.getElementById(again)?.focus());
}

/**
 * The Delete button of a resource's own page (`id`, `label`): once `question` is confirmed,
 * `remove` runs; done, the panel goes back to the listing at `list` and says `done` there; refused,
 * the API's reason shows in `error` and the page stays.
 */
export function deleteButton(o: { id: string; label: string; question: string; remove: () => Promise<unknown>; done: string; list: string; error: HTMLElement }): HTMLButtonElement {
  const button = h('button', { type: 'button', id: o.id, class: 'danger' }, o.label);
  button.addEventListener('click', async () => {
    if (!confirm(o.question)) return;
    o.error.textContent = '';
    try {
      await o.remove();
      noticeForNextPage(o.done);
      location.hash = o.list;
    } catch (err) {
      o.error.textContent = (err as Error).message;
    }
  });
  return button;
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

// Paging (docs/panel.md, The web panel: listings longer than a page). Every listing of the API
// pages the same way (page, page_size up to 100, has_more), so one control pages them all.

/** The page each listing shows, per instance, kept while the panel is open: a change's redraw, or coming back, shows that page again. */
const keptPages = new Map<string, number>();

export interface Listing<T> {
  /** Prefix of the controls' ids ("restrictions": restrictions-next), and the key its page is kept under (unless `keep`). */
  id: string;
  /** The key its page is kept under, when one control serves several listings (a webhook's deliveries, per webhook and filter); null: not kept. */
  keep?: string | null;
  /** What a row is, and its plural: ['restriction'], ['consent event']. */
  noun: [string, string?];
  /** Words after the count in the caption ("with the lifted ones"). */
  about?: string;
  columns: string[];
  /** Reads page `n` (from 1) of the listing. */
  read(n: number): Promise<Page<T>>;
  /** Rows a page, for the caption's row numbers (PAGE_SIZE unless the listing asks for fewer). */
  pageSize?: number;
  /** A row of the table; `rows` is the page's (for what depends on the other rows). */
  row(item: T, index: number, rows: T[]): HTMLTableRowElement;
}

export interface Paged<T> {
  /** The table and, when the listing is longer than a page, Previous page / Next page under it. */
  node: HTMLElement;
  /** The caption of the page shown now. */
  caption(): string;
  /** Reads the page shown again (a change, deliveries followed); the control focused in the table keeps the focus. The caption is answered. */
  reload(): Promise<string>;
}

/**
 * The listing's kept page (the first when none, or the last one left when rows went since), read
 * and drawn as `pager` draws it. Throws what the first read throws (the page shows it).
 */
export async function pagedTable<T>(ctx: Context, o: Listing<T>): Promise<Paged<T>> {
  const where = keyOf(ctx, o);
  let n = (where && keptPages.get(where)) || 1;
  let first = await o.read(n);
  while (n > 1 && !first.data.length) first = await o.read(--n);
  return pager(ctx, o, first, n);
}

/** Page `n` of rows read whole already (every page of the API, for a page that needs them all), as the API would answer it. */
export function pageOf<T>(rows: T[], n: number, size = PAGE_SIZE): Page<T> {
  const total = rows.length;
  return {
    data: rows.slice((n - 1) * size, n * size),
    pagination: { page: n, page_size: size, has_more: n * size < total, total_items: total, total_pages: Math.ceil(total / size) },
  };
}

const keyOf = (ctx: Context, o: Listing<unknown>): string | null => (o.keep === null ? null : `${ctx.current.slug}/${o.keep ?? o.id}`);

/**
 * Page `n` of a listing, already read, as a table, with Previous page / Next page under it while
 * there is more than one page (by has_more). A page is drawn in place: the caption says which rows
 * ("Restrictions, page 2: rows 101 to 200, more on the next page"), the live region says it too,
 * the focus stays on the button pressed, or goes to the table when that button can no longer be
 * used (the first or the last page).
 */
export function pager<T>(ctx: Context, o: Listing<T>, first: Page<T>, n = 1): Paged<T> {
  const [one, many = `${one}s`] = o.noun;
  const size = o.pageSize ?? PAGE_SIZE;
  const where = keyOf(ctx, o);
  const list = table('', o.columns, []);
  list.id = `${o.id}-table`;
  list.tabIndex = -1;
  const error = h('p', { class: 'error', role: 'alert' });
  const previous = h('button', { type: 'button', class: 'secondary', id: `${o.id}-previous`, 'aria-label': `Previous page of ${many}` }, 'Previous page');
  const next = h('button', { type: 'button', class: 'secondary', id: `${o.id}-next`, 'aria-label': `Next page of ${many}` }, 'Next page');
  const nav = h('nav', { class: 'pager', 'aria-label': `Pages of ${many}` }, previous, next);

  const captionOf = (p: Page<T>): string => {
    const total = p.pagination.total_items;
    if (n === 1 && !p.pagination.has_more) return `${count(p.data.length, one, many)}${o.about ? ` ${o.about}` : ''}`;
    const from = (n - 1) * size + 1;
    const rows = p.data.length ? `rows ${from} to ${from + p.data.length - 1}` : 'no rows';
    const what = `${many[0]!.toUpperCase()}${many.slice(1)}${o.about ? ` ${o.about}` : ''}`;
    return `${what}, page ${n}${p.pagination.total_pages ? ` of ${p.pagination.total_pages}` : ''}: ${rows}${total === null ? '' : ` of ${total}`}${p.pagination.has_more ? ', more on the next page' : ''}`;
  };
  const draw = (p: Page<T>): string => {
    const caption = captionOf(p);
    list.caption!.textContent = caption;
    list.tBodies[0]!.replaceChildren(...p.data.map((item, i) => o.row(item, i, p.data)));
    previous.disabled = n <= 1;
    next.disabled = !p.pagination.has_more;
    nav.hidden = n === 1 && !p.pagination.has_more;
    if (where) keptPages.set(where, n);
    return caption;
  };
  draw(first);

  let asked = 0;
  const go = async (to: number, button: HTMLButtonElement) => {
    const mine = ++asked;
    error.textContent = '';
    list.setAttribute('aria-busy', 'true');
    try {
      const p = await o.read(to);
      if (mine !== asked) return;
      n = to;
      const caption = draw(p);
      // A button just made unusable would drop the keyboard's place: the table (its caption) takes it.
      if (button.disabled) list.focus();
      ctx.announce(`${caption}.`);
    } catch (err) {
      if (mine === asked) error.textContent = (err as Error).message;
    } finally {
      if (mine === asked) list.removeAttribute('aria-busy');
    }
  };
  previous.addEventListener('click', () => void go(n - 1, previous));
  next.addEventListener('click', () => void go(n + 1, next));

  return {
    node: h('div', { class: 'paged' }, list, nav, error),
    caption: () => list.caption!.textContent ?? '',
    reload: async () => {
      const mine = ++asked;
      let p = await o.read(n);
      while (n > 1 && !p.data.length) p = await o.read(--n);
      if (mine !== asked) return list.caption!.textContent ?? '';
      const focused = list.contains(document.activeElement) && document.activeElement !== list ? document.activeElement?.id : undefined;
      const caption = draw(p);
      if (focused) document.getElementById(focused)?.focus();
      return caption;
    },
  };
}
