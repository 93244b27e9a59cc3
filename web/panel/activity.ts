import * as api from './api.js';
import { field, h, select } from './dom.js';
import { count, heading } from './kit.js';
import type { Context } from './context.js';

/**
 * The Activity page (#/activity; docs/panel.md, Activity): the four public listings (sent,
 * opens, clicks, unopened) through their /v1/private mirrors, with the spec's filters, group_by
 * and the people-only switch of opens and clicks; pages by has_more; the exports as the API
 * streams them (fetched with the session, saved as the file it names). A mail_id opens the mail
 * and its logs (#/activity/mail/<mail_id>). Results are drawn in place and said in the live
 * region, so the focus stays on the control used.
 */

const TITLES: Record<api.Listing, string> = { sent: 'Sent', opens: 'Opens', clicks: 'Clicks', unopened: 'Unopened' };
const ABOUT: Record<api.Listing, string> = {
  sent: 'Every mail received, newest first, with its status and its opens and clicks; dates are those of reception.',
  opens: 'Opens, newest first; dates are those of the open. Grouped, a row counts the opens of a recipient or of a message.',
  clicks: 'Clicks, newest first; dates are those of the click. Grouped, a row counts the clicks of a recipient or of a message.',
  unopened: 'Delivered mails with no recorded open, one row per recipient, newest first; dates are those of reception.',
};
const STATUSES: Array<[string, string]> = [
  ['', 'Any'],
  ['1', '1 received'],
  ['2', '2 queued'],
  ['3', '3 sent'],
  ['4', '4 dropped'],
  ['5', '5 deferred'],
  ['6', '6 bounced'],
  ['7', '7 on hold'],
];
/** The text filters every listing takes, with their labels. */
const TEXT_FILTERS: Array<[string, string]> = [
  ['msg_id', 'Message id (msg_id)'],
  ['mail_id', 'Mail id (mail_id)'],
  ['custom_msg_id', 'Custom message id'],
  ['custom_group_code', 'Custom group code'],
  ['subject', 'Subject contains'],
];
const EVENT_ONLY = ['group_by', 'exclude_machine'];
const SENT_ONLY = ['status', 'opened'];

/** What was last asked, kept while the panel is open (a mail's page and back keep it). */
const state: { slug: string; listing: api.Listing; filters: Record<string, string>; page: number; pageSize: number } = { slug: '', listing: 'sent', filters: {}, page: 1, pageSize: 25 };

/** The filters `listing` takes, blanks left out (the API's defaults then apply). */
function filtersFor(listing: api.Listing): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(state.filters)) {
    if (!v) continue;
    if (EVENT_ONLY.includes(k) && listing !== 'opens' && listing !== 'clicks') continue;
    if (SENT_ONLY.includes(k) && listing !== 'sent') continue;
    if (k === 'recipient_operator' && !state.filters['recipient']) continue;
    out[k] = v;
  }
  return out;
}

export async function activityPage(ctx: Context): Promise<Node[]> {
  const [, sub, mailId] = location.hash.replace(/^#\//, '').split('/');
  if (sub === 'mail' && mailId) return mailPage(ctx, decodeURIComponent(mailId));
  const slug = ctx.current.slug;
  // Another instance: its own senders and mails, so the filters start again (the listing stays).
  if (state.slug !== slug) Object.assign(state, { slug, filters: {}, page: 1 });
  const title = heading(`Activity of ${ctx.current.name}`);

  // The listing chooser: radio buttons in a fieldset (arrow keys move between them).
  const chooser = h('fieldset', { class: 'choice', id: 'listing' }, h('legend', {}, 'Listing'));
  for (const l of api.LISTINGS) {
    const radio = h('input', { type: 'radio', name: 'listing', value: l, id: `listing-${l}`, checked: l === state.listing });
    radio.addEventListener('change', () => {
      state.listing = l;
      state.page = 1;
      shape();
      void load(`${TITLES[l]}: `);
    });
    chooser.append(h('div', { class: 'check' }, radio, h('label', { for: radio.id }, TITLES[l])));
  }
  const about = h('p', { class: 'help', id: 'listing-about' });

  // The filters. Each control's name is its query parameter.
  const f = state.filters;
  const input = (name: string, type = 'text', attrs: Record<string, string> = {}) => h('input', { type, name, value: f[name] ?? '', autocomplete: 'off', ...attrs });
  let senders: api.Sender[] = [];
  try {
    senders = (await api.senders(slug)).data;
  } catch {
    // The filter still works without the names: "Any" only.
  }
  const controls = {
    start_date: input('start_date', 'date'),
    end_date: input('end_date', 'date'),
    tz: input('tz', 'text', { placeholder: "the instance's", 'aria-describedby': 'tz-help' }),
    sender_id: select('sender_id', [['', 'Any'], ...senders.map((s): [string, string] => [String(s.id), `${s.name} <${s.email_address}>`])], f['sender_id'] ?? ''),
    recipient: input('recipient'),
    recipient_operator: select('recipient_operator', [['eq', 'is exactly'], ['starts_with', 'starts with']], f['recipient_operator'] ?? 'eq'),
    ...Object.fromEntries(TEXT_FILTERS.map(([name]) => [name, input(name)])),
    status: select('status', STATUSES, f['status'] ?? ''),
    opened: select('opened', [['', 'All'], ['opened', 'Opened'], ['unopened', 'Delivered, not opened']], f['opened'] ?? ''),
    group_by: select('group_by', [['none', 'Each event'], ['mail_id', 'Per recipient (mail_id)'], ['msg_id', 'Per message (msg_id)']], f['group_by'] ?? 'none'),
  } as Record<string, HTMLInputElement | HTMLSelectElement>;
  const people = h('input', { type: 'radio', name: 'exclude_machine', value: 'true', id: 'machine-people', checked: f['exclude_machine'] === 'true' });
  const all = h('input', { type: 'radio', name: 'exclude_machine', value: 'false', id: 'machine-all', checked: f['exclude_machine'] !== 'true' });
  const machine = h(
    'fieldset',
    { class: 'choice', id: 'machine' },
    h('legend', {}, 'Whose events'),
    h('div', { class: 'check' }, all, h('label', { for: all.id }, 'Include machine-made')),
    h('div', { class: 'check' }, people, h('label', { for: people.id }, 'People only')),
  );
  const pageSize = h('input', { type: 'number', name: 'page_size', min: '1', max: '100', value: String(state.pageSize), required: true });
  const wrap = (name: string, label: string) => {
    const w = field(label, controls[name]!);
    w.dataset['filter'] = name;
    return w;
  };
  const sentOnly = [wrap('status', 'Status'), wrap('opened', 'Opened')];
  const eventOnly = [wrap('group_by', 'Group by'), machine];
  const form = h(
    'form',
    { class: 'inline filters', 'aria-label': 'Filters' },
    wrap('start_date', 'From (local date)'),
    wrap('end_date', 'To (inclusive)'),
    wrap('tz', 'Time zone'),
    wrap('sender_id', 'Sender'),
    wrap('recipient', 'Recipient'),
    wrap('recipient_operator', 'Recipient match'),
    ...TEXT_FILTERS.map(([name, label]) => wrap(name, label)),
    ...sentOnly,
    ...eventOnly,
    field('Rows per page', pageSize),
    h('button', { type: 'submit' }, 'Show'),
    h('button', { type: 'reset', class: 'secondary' }, 'Clear filters'),
  );
  const tzHelp = h('p', { class: 'help', id: 'tz-help' }, "Dates are local days in this IANA zone (e.g. Europe/Madrid); blank: the instance's zone, else UTC.");
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    state.filters = {};
    for (const [name, control] of Object.entries(controls)) state.filters[name] = control.value.trim();
    state.filters['exclude_machine'] = people.checked ? 'true' : '';
    state.pageSize = Number(pageSize.value) || 25;
    state.page = 1;
    void load();
  });
  form.addEventListener('reset', () => {
    state.filters = {};
    state.page = 1;
    // After the browser has put the fields back to their first values: blank them.
    setTimeout(() => {
      for (const control of Object.values(controls)) control.value = control instanceof HTMLSelectElement ? control.options[0]!.value : '';
      controls['recipient_operator']!.value = 'eq';
      all.checked = true;
      pageSize.value = String(state.pageSize);
      void load('Filters cleared. ');
    });
  });

  // The results, drawn in place; paging and exports.
  const error = h('p', { class: 'error', role: 'alert' });
  const resultsTitle = h('h2', { id: 'results', tabindex: '-1' }, 'Results');
  const results = h('div', { class: 'results' });
  const previous = h('button', { type: 'button', class: 'secondary', id: 'page-previous' }, 'Previous page');
  const next = h('button', { type: 'button', class: 'secondary', id: 'page-next' }, 'Next page');
  previous.addEventListener('click', () => {
    state.page = Math.max(1, state.page - 1);
    void load();
  });
  next.addEventListener('click', () => {
    state.page += 1;
    void load();
  });
  // Their text names the listing (shape() sets it): "Export Opens as CSV".
  const exportCsv = h('button', { type: 'button', id: 'export-csv' });
  const exportJson = h('button', { type: 'button', id: 'export-json' });
  exportCsv.addEventListener('click', () => void save(exportCsv, 'csv'));
  exportJson.addEventListener('click', () => void save(exportJson, 'json'));
  const exportHelp = h('p', { class: 'help' }, 'An export holds every row of the listing for these filters (no pages), as the API streams it.');

  function shape(): void {
    const l = state.listing;
    about.textContent = ABOUT[l];
    for (const el of sentOnly) el.hidden = l !== 'sent';
    for (const el of eventOnly) el.hidden = l !== 'opens' && l !== 'clicks';
    exportCsv.textContent = `Export ${TITLES[l]} as CSV`;
    exportJson.textContent = `Export ${TITLES[l]} as JSON`;
  }

  let asked = 0;
  // The first drawing's message waits for the shell, which clears the live region on a new page.
  let say = (message: string): void => {
    setTimeout(() => ctx.announce(message));
  };
  async function load(prefix = ''): Promise<boolean> {
    const mine = ++asked;
    const l = state.listing;
    error.textContent = '';
    let page: api.Page<api.Row>;
    try {
      page = await api.activity(slug, l, { ...filtersFor(l), page: String(state.page), page_size: String(state.pageSize) });
    } catch (err) {
      if (mine !== asked) return false;
      error.textContent = (err as Error).message;
      results.replaceChildren();
      previous.disabled = next.disabled = true;
      say(`${TITLES[l]}: ${(err as Error).message}`);
      return false;
    }
    if (mine !== asked) return false;
    const first = (state.page - 1) * state.pageSize + 1;
    const shownRows = page.data.length ? `rows ${first} to ${first + page.data.length - 1}` : 'no rows';
    const total = page.pagination.total_items === null ? '' : ` of ${page.pagination.total_items}`;
    const caption = `${TITLES[l]}, page ${state.page}: ${shownRows}${total}${page.pagination.has_more ? ', more on the next page' : ''}`;
    results.replaceChildren(page.data.length ? rowsTable(caption, page.data) : h('p', { id: 'no-rows' }, `${caption}. No row matches these filters.`));
    const focused = document.activeElement;
    previous.disabled = state.page <= 1;
    next.disabled = !page.pagination.has_more;
    // A button just disabled would drop the keyboard's place: the results' heading takes it.
    if ((focused === next && next.disabled) || (focused === previous && previous.disabled)) resultsTitle.focus();
    say(`${prefix}${caption}.`);
    return true;
  }

  async function save(button: HTMLButtonElement, format: 'csv' | 'json'): Promise<void> {
    const l = state.listing;
    error.textContent = '';
    button.disabled = true;
    ctx.announce(`Exporting ${TITLES[l]} as ${format.toUpperCase()}…`);
    try {
      const { blob, filename } = await api.download(slug, l, { ...filtersFor(l), format });
      const href = URL.createObjectURL(blob);
      const a = h('a', { href, download: filename, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(href), 60_000);
      ctx.announce(`${filename} saved: ${count(blob.size, 'byte')}.`);
    } catch (err) {
      error.textContent = (err as Error).message;
      ctx.announce('');
    } finally {
      button.disabled = false;
    }
  }

  shape();
  const content = [
    title,
    h('p', {}, 'What the API lists, for the current instance. Choose a listing, filter it, page through it, export it; a mail id opens that mail and its logs.'),
    chooser,
    about,
    h('h2', { id: 'filters' }, 'Filters'),
    form,
    tzHelp,
    resultsTitle,
    error,
    results,
    h('div', { class: 'actions', role: 'group', 'aria-label': 'Pages' }, previous, next),
    h('h2', { id: 'export' }, 'Export'),
    h('div', { class: 'actions' }, exportCsv, exportJson),
    exportHelp,
  ];
  await load();
  say = (message) => {
    ctx.announce(message);
  };
  return content;
}

/** A row's value as a cell: null as an em dash, a mail_id as the link to that mail. */
function cell(key: string, value: unknown): HTMLTableCellElement {
  if (value === null || value === undefined) return h('td', {}, '—');
  if (key === 'mail_id' && typeof value === 'string') return h('td', {}, h('a', { href: `#/activity/mail/${encodeURIComponent(value)}`, 'aria-label': `Mail ${value}: details and logs` }, h('code', {}, value)));
  if (typeof value === 'object') return h('td', {}, h('code', {}, JSON.stringify(value)));
  return h('td', {}, String(value));
}

/** The rows as a table whose columns are the rows' fields, in the API's order. */
function rowsTable(caption: string, rows: api.Row[], id = 'activity-rows'): HTMLElement {
  const columns = Object.keys(rows[0]!);
  const table = h(
    'table',
    { class: 'rows', id },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...columns.map((c) => cell(c, r[c]))))),
  );
  // Wide rows scroll sideways in a region the keyboard can focus and scroll.
  return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption }, table);
}

/** One mail (#/activity/mail/<mail_id>): its record and its logs, oldest first. */
async function mailPage(ctx: Context, mailId: string): Promise<Node[]> {
  const back = h('p', {}, h('a', { href: '#/activity' }, 'Back to the activity'));
  const title = heading(`Mail ${mailId}`);
  let mail: api.Row;
  let logs: api.Page<api.Row>;
  try {
    [mail, logs] = await Promise.all([api.mail(ctx.current.slug, mailId), api.mailLogs(ctx.current.slug, mailId)]);
  } catch (err) {
    return [back, title, h('p', { class: 'error', role: 'alert' }, (err as Error).message)];
  }
  const facts = h('dl', { class: 'facts', id: 'mail-facts' });
  for (const [k, v] of Object.entries(mail)) facts.append(h('dt', {}, k), h('dd', {}, v === null ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v)));
  const caption = `${count(logs.data.length, 'state move')} of this mail, oldest first${logs.pagination.has_more ? ' (the first 100)' : ''}`;
  const list = logs.data.length ? rowsTable(caption, logs.data, 'mail-logs') : h('p', {}, 'No state move recorded.');
  setTimeout(() => ctx.announce(`Mail ${mailId}: ${caption}.`));
  return [back, title, h('h2', {}, 'The mail'), facts, h('h2', { id: 'logs' }, 'Logs'), list];
}
