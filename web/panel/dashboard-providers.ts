import * as api from './api.js';
import { barChart, rateChart } from './chart.js';
import { field, h, select } from './dom.js';
import type { Context } from './context.js';
import { percent, PROVIDER_LABELS, STATUS_TEXT, THRESHOLDS, type Metric } from './providers.js';

/**
 * The dashboard's Providers section (issue 40, docs/panel.md "Dashboard"): for the dashboard's
 * range, GET /v1/private/deliverability/providers as a table (counts, opens all and by people
 * side by side, the complaint and bounce rates with their status in words and colour), then one
 * provider's days (GET …/providers/{provider}/daily): its complaint and bounce rates with the
 * warning and critical thresholds drawn as lines, and its opens, all and by people side by side.
 * The figures are the API's as they are.
 */

/** The provider last shown per instance, kept while the panel is open (as the range is). */
const chosen = new Map<string, api.ProviderId>();

const COUNTS = ['sent', 'delivered', 'deferred', 'bounced_hard', 'bounced_soft', 'complaints', 'unsubscribed', 'opened', 'opened_human'] as const;

/** Two header rows: bounces hard and soft, opens all and by people, each pair under its name. */
function head(): HTMLTableSectionElement {
  const one = (text: string) => h('th', { scope: 'col', rowspan: '2' }, text);
  const group = (text: string) => h('th', { scope: 'colgroup', colspan: '2', class: 'group' }, text);
  const sub = (text: string) => h('th', { scope: 'col' }, text);
  return h(
    'thead',
    {},
    // The rates first: what a sender asks first is which provider is near a line.
    h('tr', {}, one('Provider'), one('Complaint rate'), one('Hard-bounce rate'), one('Sent'), one('Delivered'), one('Deferred'), group('Bounces'), one('Complaints'), one('Unsub\u00adscribed'), group('Opens')),
    h('tr', {}, sub('Hard'), sub('Soft'), sub('All'), sub('By people')),
  );
}

/**
 * A rate as shown: none where its status is no_data (Gmail's 0 complaints are unknown, not
 * 0 %: the API answers 0 beside no_data, the page says no number rather than a false one).
 */
const shownRate = (rate: number | null, status: api.RateStatus): number | null => (status === 'no_data' ? null : rate);

/** A rate and its status: the words say the status, the colour only repeats them. */
function rateCell(metric: Metric, rate: number | null, status: api.RateStatus): HTMLTableCellElement {
  return h(
    'td',
    { class: 'num', 'data-rate': metric, 'data-status': status },
    h('span', { class: 'rate' }, percent(shownRate(rate, status))),
    h('br'),
    h('span', { class: `rate-status ${status}` }, STATUS_TEXT[status]),
  );
}

function providersTable(rows: api.ProviderRow[], show: (p: api.ProviderId) => void): HTMLElement {
  const body = rows.map((r) =>
    h(
      'tr',
      { 'data-provider': r.provider },
      h(
        'th',
        { scope: 'row' },
        h('button', { type: 'button', class: 'link', 'aria-label': `Show the days of ${PROVIDER_LABELS[r.provider]}`, onclick: () => show(r.provider) }, PROVIDER_LABELS[r.provider]),
      ),
      rateCell('complaint_rate', r.complaint_rate, r.complaint_status),
      rateCell('bounce_rate', r.bounce_rate, r.bounce_status),
      ...COUNTS.map((k) => h('td', { class: 'num', 'data-count': k }, String(r[k]))),
    ),
  );
  const table = h(
    'table',
    { class: 'providers-table' },
    h('caption', {}, 'Per mailbox provider, most mails first (press a provider to see its days below)'),
    head(),
    h('tbody', {}, ...body),
  );
  return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': 'Providers' }, table);
}

/** One provider's days: the two rates against their thresholds, and its opens side by side. */
function dailyCharts(d: api.ProviderDaily): Node[] {
  const days = d.days.map((x) => x.date);
  const label = PROVIDER_LABELS[d.provider];
  const lines = (m: Metric) => [
    { name: 'warning', value: THRESHOLDS[m].warning },
    { name: 'critical', value: THRESHOLDS[m].critical },
  ];
  return [
    h('div', { class: 'charts provider-charts' },
      rateChart('c-p-complaints', `Complaint rate at ${label}`, days, d.days.map((x) => shownRate(x.complaint_rate, x.complaint_status)), lines('complaint_rate'), percent, d.days.map((x) => STATUS_TEXT[x.complaint_status])),
      rateChart('c-p-bounces', `Hard-bounce rate at ${label}`, days, d.days.map((x) => shownRate(x.bounce_rate, x.bounce_status)), lines('bounce_rate'), percent, d.days.map((x) => STATUS_TEXT[x.bounce_status])),
      barChart('c-p-opens', `Opens at ${label}`, days, [
        { label: 'All opens', cls: 's3', values: d.days.map((x) => x.opened) },
        { label: 'By people', cls: 's1', values: d.days.map((x) => x.opened_human) },
      ], 'grouped'),
    ),
  ];
}

/** The section for the range the dashboard shows; nothing when the range was refused. */
export async function providersSection(ctx: Context, range: { start_date?: string; end_date?: string }): Promise<Node[]> {
  const slug = ctx.current.slug;
  const heading = h('h2', { id: 'providers-heading' }, 'Mailbox providers');
  const error = h('p', { class: 'error', role: 'alert' });
  let rows: api.ProviderRow[];
  try {
    rows = (await api.providerFigures(slug, range)).data;
  } catch (err) {
    error.textContent = (err as Error).message;
    return [heading, error];
  }
  const help = h(
    'p',
    { class: 'help' },
    `Complaint rate: complaints ÷ delivered; warning from ${percent(THRESHOLDS.complaint_rate.warning)}, critical from ${percent(THRESHOLDS.complaint_rate.critical)} (Gmail’s and Yahoo’s bulk-sender rules). ` +
      `Bounce rate: hard bounces among the mails the provider answered; warning from ${percent(THRESHOLDS.bounce_rate.warning)}, critical from ${percent(THRESHOLDS.bounce_rate.critical)}. ` +
      '“no data” for complaints at Gmail and Google Workspace: they report complaints only in aggregate (Postmaster Tools), so none received does not mean none made.',
  );
  if (!rows.length) return [heading, h('p', {}, 'No mail to any provider in this range.')];

  const current = chosen.get(slug);
  const initial = current && rows.some((r) => r.provider === current) ? current : rows[0]!.provider;
  const picker = select('provider', rows.map((r) => [r.provider, PROVIDER_LABELS[r.provider]]), initial, { id: 'provider-days' });
  const days = h('div', { class: 'provider-days', 'aria-live': 'off' });
  const dayError = h('p', { class: 'error', role: 'alert' });
  const load = async (p: api.ProviderId, announce: boolean) => {
    dayError.textContent = '';
    days.setAttribute('aria-busy', 'true');
    try {
      const d = await api.providerDaily(slug, p, range);
      chosen.set(slug, p);
      days.replaceChildren(...dailyCharts(d));
      if (announce) ctx.announce(`${PROVIDER_LABELS[p]}: its days from ${d.start_date} to ${d.end_date}.`);
    } catch (err) {
      days.replaceChildren();
      dayError.textContent = (err as Error).message;
    } finally {
      days.removeAttribute('aria-busy');
    }
  };
  picker.addEventListener('change', () => void load(picker.value as api.ProviderId, true));
  const show = (p: api.ProviderId) => {
    picker.value = p;
    void load(p, true).then(() => picker.focus());
  };
  await load(initial, false);
  return [
    h(
      'section',
      { class: 'providers', 'aria-labelledby': 'providers-heading' },
      heading,
      help,
      providersTable(rows, show),
      h('h3', { id: 'provider-days-heading' }, 'One provider, per day'),
      h('div', { class: 'inline' }, field('Provider', picker)),
      dayError,
      days,
    ),
  ];
}
