import * as api from './api.js';
import { field, h } from './dom.js';
import { count, pageOf, pagedTable, pager, when } from './kit.js';
import type { Context } from './context.js';

/**
 * A domain's DMARC aggregate reports on its page (issue 39, docs/panel.md "A domain"): for a
 * range of days, the sources that sent mail as the domain (one row per source IP, as the
 * mailbox providers reported them) split in two, the sources of mail Cartero signed and the
 * others, and the reports themselves. The figures are the API's (GET …/dmarc-sources and
 * …/dmarc-reports) as they are; the page only adds rates and the split.
 */

/** The range last shown per instance and domain, kept while the panel is open. */
const ranges = new Map<string, Range>();
interface Range {
  start_date: string;
  end_date: string;
}

const DAY = 86_400_000;
/** The last 30 days, today included, as UTC dates: the reports' periods are UTC days. */
function defaultRange(): Range {
  const today = Date.now();
  return { start_date: new Date(today - 29 * DAY).toISOString().slice(0, 10), end_date: new Date(today).toISOString().slice(0, 10) };
}

/** "97.5 %" and, under it, "39 of 40"; an em dash when there is nothing to rate. */
function rateCell(n: number, of: number): HTMLTableCellElement {
  if (!of) return h('td', { class: 'num' }, '—');
  return h('td', { class: 'num' }, percent(n, of), h('br'), h('small', {}, `${n} of ${of}`));
}
const percent = (n: number, of: number): string => `${((100 * n) / of).toFixed(1)} %`;
const rateText = (n: number, of: number): string => (of ? `${percent(n, of)} (${n} of ${of})` : '—');
const list = (v: string | string[] | null): string => (Array.isArray(v) ? v.join(', ') || '—' : v || '—');

/** "none 12, quarantine 3": the dispositions the receivers applied, the ones that happened. */
function dispositions(d: api.DmarcSource['dispositions']): string {
  const said = (['none', 'quarantine', 'reject'] as const).filter((k) => d[k] > 0).map((k) => `${k} ${d[k]}`);
  return said.length ? said.join(', ') : '—';
}

/** A report's period: "2026-11-20 (UTC day)" for the usual whole day, else both ends in UTC. */
function period(r: api.DmarcReport): string {
  const begin = r.begin_at.slice(0, 16).replace('T', ' ');
  const end = r.end_at.slice(0, 16).replace('T', ' ');
  const length = Date.parse(r.end_at) - Date.parse(r.begin_at);
  if (begin.endsWith('00:00') && (length === DAY || length === DAY - 1000)) return `${begin.slice(0, 10)} (UTC day)`;
  return `${begin} to ${end} UTC`;
}

function policy(p: api.DmarcReport['policy']): string {
  const tags: string[] = [];
  if (p.p) tags.push(`p=${p.p}`);
  if (p.sp) tags.push(`sp=${p.sp}`);
  if (p.np) tags.push(`np=${p.np}`);
  if (p.pct !== null && p.pct !== undefined) tags.push(`pct=${p.pct}`);
  if (p.adkim) tags.push(`adkim=${p.adkim}`);
  if (p.aspf) tags.push(`aspf=${p.aspf}`);
  return tags.join('; ') || '—';
}

const SOURCE_COLUMNS = ['Source IP', 'Messages', 'DMARC pass', 'DKIM aligned pass', 'SPF aligned pass', 'Dispositions', 'Header from', 'Reporters'];

function sourceRow(s: api.DmarcSource, cartero: boolean): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h('th', { scope: 'row' }, h('code', {}, s.source_ip)),
    h('td', { class: 'num' }, String(s.message_count)),
    ...(cartero ? [rateCell(s.cartero_signed_count, s.message_count)] : []),
    rateCell(s.dmarc_pass_count, s.message_count),
    rateCell(s.dkim_aligned_pass_count, s.message_count),
    rateCell(s.spf_aligned_pass_count, s.message_count),
    h('td', {}, dispositions(s.dispositions)),
    h('td', {}, list(s.header_from)),
    h('td', {}, list(s.reporters)),
  );
}

function reportRow(r: api.DmarcReport): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h('th', { scope: 'row' }, r.org_name, r.org_email ? h('br') : null, r.org_email ? h('small', {}, r.org_email) : null),
    h('td', {}, period(r)),
    h('td', { class: 'num' }, String(r.message_count)),
    rateCell(r.dmarc_pass_count, r.message_count),
    h('td', { class: 'num' }, String(r.dmarc_fail_count)),
    h('td', {}, policy(r.policy), h('br'), h('small', {}, r.schema === 'rfc9990' ? 'RFC 9990' : 'RFC 7489')),
    h('td', {}, r.reporter_authenticated ? h('span', { class: 'state approved' }, 'authenticated') : h('span', { class: 'state pending' }, 'not authenticated')),
    h('td', {}, h('code', { class: 'report-id' }, r.report_id)),
    h('td', {}, when(r.received_at)),
  );
}

/** A wide table scrolls sideways in a region the keyboard can focus and scroll. */
const scroll = (label: string, node: Node): HTMLElement => h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': label }, node);

/**
 * The section: a From / To range, then what the reports of that range say. A range is read and
 * drawn in place (the rest of the domain's page stays), said in the live region, the focus left
 * on Show.
 */
export async function dmarcSection(ctx: Context, d: api.DomainWithRecords): Promise<HTMLElement> {
  const slug = ctx.current.slug;
  const key = `${slug}/${d.domain}`;
  const range = ranges.get(key) ?? defaultRange();
  const start = h('input', { type: 'date', name: 'start_date', required: true, value: range.start_date, id: 'dmarc-from' });
  const end = h('input', { type: 'date', name: 'end_date', required: true, value: range.end_date, id: 'dmarc-to' });
  const show = h('button', { type: 'submit' }, 'Show');
  const form = h('form', { class: 'inline', 'aria-label': 'DMARC reports range' }, field('From (UTC)', start), field('To (UTC, inclusive)', end), show);
  const error = h('p', { class: 'error', role: 'alert', id: 'dmarc-error' });
  const results = h('div', { class: 'dmarc-results' });

  const load = async (r: Range): Promise<string | undefined> => {
    error.textContent = '';
    results.setAttribute('aria-busy', 'true');
    try {
      const [sources, reports] = await Promise.all([
        api.everyPage((n) => api.dmarcSources(slug, d.domain, r, n)),
        pagedTable(ctx, {
          id: 'dmarc-reports',
          keep: null,
          noun: ['report'],
          about: `from ${r.start_date} to ${r.end_date}, newest first`,
          columns: ['Reporter', 'Period', 'Messages', 'DMARC pass', 'DMARC fail', 'Policy published', 'Report mail', 'Report ID', 'Received'],
          read: (n) => api.dmarcReports(slug, d.domain, r, n),
          row: reportRow,
        }),
      ]);
      ranges.set(key, r);
      results.replaceChildren(...drawn(ctx, d, r, sources, reports.node));
      return `DMARC from ${r.start_date} to ${r.end_date}: ${count(sources.length, 'source')}, ${reports.caption().replace(/ from .*$/, '')}.`;
    } catch (err) {
      const e = err as api.ApiError;
      results.replaceChildren();
      // The API's 422 names the field; said here in the form's words.
      error.textContent =
        e.problem?.status === 422
          ? `This range cannot be shown: both dates must be real dates and the end not before the start. (${e.message})`
          : e.problem?.status === 503
            ? `The reports could not be read just now; try again in a moment. (${e.message})`
            : e.message;
      return undefined;
    } finally {
      results.removeAttribute('aria-busy');
    }
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    ctx.announce('');
    show.disabled = true;
    const said = await load({ start_date: start.value, end_date: end.value });
    show.disabled = false;
    show.focus();
    if (said) ctx.announce(said);
  });
  await load(range);
  return h(
    'section',
    { class: 'dmarc', 'aria-labelledby': 'dmarc-heading' },
    h('h2', { id: 'dmarc-heading' }, 'DMARC reports'),
    h(
      'p',
      { class: 'help' },
      'Mailbox providers send a daily report of the mail that claimed this domain: from which addresses, and whether it passed DMARC. ' +
        `They send it to the address in the DMARC record’s rua= tag, dmarc@${d.return_path_domain} in the record above. ` +
        'Mail Cartero signed is shown apart from the rest: the rest is other services sending as you, or someone pretending to.',
    ),
    form,
    error,
    results,
  );
}

/** The range's figures: the summary, the two groups of sources, the reports. */
function drawn(ctx: Context, d: api.DomainWithRecords, r: Range, sources: api.DmarcSource[], reports: HTMLElement): Node[] {
  const sum = (rows: api.DmarcSource[], k: 'message_count' | 'dmarc_pass_count' | 'cartero_signed_count') => rows.reduce((n, s) => n + s[k], 0);
  // A source belongs with Cartero's mail as soon as some of its mail carried Cartero's signature.
  // The API's order (busiest first) kept in each group.
  const ours = sources.filter((s) => s.cartero_signed_count > 0);
  const theirs = sources.filter((s) => s.cartero_signed_count === 0);
  const messages = sum(sources, 'message_count');
  const capped = sources.length >= api.MOST_PAGES * api.PAGE_SIZE;
  const summary = h(
    'dl',
    { class: 'facts dmarc-summary' },
    h('dt', {}, 'Messages reported'),
    h('dd', { 'data-fact': 'messages' }, `${messages} from ${count(sources.length, 'source')}`),
    h('dt', {}, 'Through Cartero'),
    h('dd', { 'data-fact': 'cartero-share' }, messages ? `${rateText(sum(sources, 'cartero_signed_count'), messages)} signed by one of its DKIM selectors` : '—'),
    h('dt', {}, 'DMARC pass, sources of Cartero’s mail'),
    h('dd', { 'data-fact': 'cartero-pass' }, rateText(sum(ours, 'dmarc_pass_count'), sum(ours, 'message_count'))),
    h('dt', {}, 'DMARC pass, other sources'),
    h('dd', { 'data-fact': 'other-pass' }, rateText(sum(theirs, 'dmarc_pass_count'), sum(theirs, 'message_count'))),
  );
  const group = (id: string, title: string, rows: api.DmarcSource[], cartero: boolean, none: string): Node[] => {
    const heading = h('h3', { id: `${id}-heading` }, title);
    if (!rows.length) return [heading, h('p', { id }, none)];
    const columns = cartero ? [...SOURCE_COLUMNS.slice(0, 2), 'Signed by Cartero', ...SOURCE_COLUMNS.slice(2)] : SOURCE_COLUMNS;
    const listing = { id, keep: null, noun: ['source'] as [string], about: '(busiest first)', columns, read: async (n: number) => pageOf(rows, n), row: (s: api.DmarcSource) => sourceRow(s, cartero) };
    const paged = pager(ctx, listing, pageOf(rows, 1));
    return [heading, scroll(title, paged.node)];
  };
  if (!sources.length) {
    return [
      h('p', { class: 'dmarc-none' }, `No DMARC report about ${d.domain} covers ${r.start_date} to ${r.end_date}. Reports usually come a day after the mail; a domain whose DMARC record has no rua= gets none.`),
      h('h3', {}, 'Reports'),
      scroll('Reports', reports),
    ];
  }
  return [
    summary,
    capped ? h('p', { class: 'help' }, `The ${sources.length} busiest sources are shown: choose a shorter range to see all.`) : null,
    ...group('dmarc-cartero', 'Sources of mail Cartero signed', ours, true, 'None of the mail reported carried Cartero’s DKIM signature.'),
    ...group('dmarc-others', 'Other sources sending as this domain', theirs, false, 'Every source reported sent mail Cartero signed.'),
    h('h3', {}, 'Reports'),
    scroll('Reports', reports),
  ].filter((n): n is Node => n !== null);
}
