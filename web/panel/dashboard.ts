import * as api from './api.js';
import { barChart } from './chart.js';
import { field, h } from './dom.js';
import type { Context } from './context.js';
import { providersSection } from './dashboard-providers.js';

/**
 * The Dashboard (#/dashboard): GET /v1/private/dashboard for a range of local days (by default
 * the API's: the last 30 days in the instance's zone), drawn as per-day charts, each with its
 * numbers as a table, then the totals, the mailbox providers (dashboard-providers.ts), the top
 * bounce reasons and the restrictions added.
 * What each figure equals is docs/panel.md's "Dashboard" table.
 */

const LABELS: Record<keyof api.Figures, string> = {
  sent: 'Sent',
  delivered: 'Delivered',
  bounced: 'Bounced',
  bounced_hard: 'Bounced, hard',
  bounced_soft: 'Bounced, soft',
  complained: 'Complaints',
  opened: 'Opens',
  opened_human: 'Opens by people',
  opened_machine: 'Opens by machines',
  clicked: 'Clicks',
  clicked_human: 'Clicks by people',
  clicked_machine: 'Clicks by machines',
  delivered_opened: 'Delivered mails opened',
  delivered_opened_human: 'Delivered mails opened by a person',
  delivered_clicked: 'Delivered mails clicked',
  delivered_clicked_human: 'Delivered mails clicked by a person',
  restricted: 'Restrictions added',
};

/** "42.9 % (3 of 7)"; an em dash when nothing was delivered. */
const rate = (n: number, of: number): string => (of ? `${((100 * n) / of).toFixed(1)} % (${n} of ${of})` : '—');

/** The open and click rates of the range's delivered mails: all of them and by people, side by side (issue 32). */
function ratesTable(d: api.Dashboard): HTMLTableElement {
  const t = d.totals;
  const row = (what: string, all: number, people: number) =>
    h('tr', {}, h('th', { scope: 'row' }, what), h('td', {}, rate(all, t.delivered)), h('td', {}, rate(people, t.delivered)));
  return h(
    'table',
    { class: 'rates-table' },
    h('caption', {}, 'Of the mails delivered in the range: opened and clicked, by anyone and by people (machine-made events left out)'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Rate'), h('th', { scope: 'col' }, 'All'), h('th', { scope: 'col' }, 'By people'))),
    h(
      'tbody',
      {},
      row('Open rate', t.delivered_opened, t.delivered_opened_human),
      row('Click rate', t.delivered_clicked, t.delivered_clicked_human),
    ),
  );
}

/** The range last asked, kept while the panel is open (switching instance keeps it). */
let range: { start_date?: string; end_date?: string } = {};

export async function dashboardPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const heading = h('h1', { tabindex: '-1' }, `Dashboard of ${instance.name}`);
  const error = h('p', { class: 'error', role: 'alert' });
  let d: api.Dashboard | undefined;
  try {
    d = await api.dashboard(instance.slug, range);
  } catch (err) {
    const e = err as api.ApiError;
    // The API's 422 names the field; said here in the form's words.
    error.textContent =
      e.problem?.status === 422
        ? `This range cannot be shown: both dates must be real dates, the end not before the start, and at most 92 days in all. (${e.message})`
        : e.message;
  }
  const start = h('input', { type: 'date', name: 'start_date', required: true, value: d?.start_date ?? range.start_date });
  const end = h('input', { type: 'date', name: 'end_date', required: true, value: d?.end_date ?? range.end_date });
  const form = h('form', { class: 'inline', 'aria-label': 'Range' }, field('From', start), field('To (inclusive)', end), h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    range = { start_date: start.value, end_date: end.value };
    void ctx.refresh();
  });
  if (!d) return [heading, form, error];
  // The providers' figures for the range drawn, once the API took it (a refused range is asked once).
  const providers = providersSection(ctx, { start_date: d.start_date, end_date: d.end_date });

  const days = d.days.map((x) => x.date);
  const col = (k: keyof api.Figures) => d!.days.map((x) => x[k]);
  const other = d.days.map((x) => x.sent - x.delivered - x.bounced);
  const charts = [
    barChart('c-sent', 'Sent, by what became of them', days, [
      { label: 'Delivered', cls: 's1', values: col('delivered') },
      { label: 'Bounced', cls: 's4', values: col('bounced') },
      { label: 'Other (queued, dropped, failed)', cls: 's3', values: other },
    ]),
    barChart('c-bounced', 'Bounced', days, [
      { label: 'Hard', cls: 's4', values: col('bounced_hard') },
      { label: 'Soft', cls: 's2', values: col('bounced_soft') },
    ]),
    barChart('c-complained', 'Complaints', days, [{ label: 'Complaints', cls: 's4', values: col('complained') }]),
    barChart('c-opened', 'Opens', days, [
      { label: 'By people', cls: 's1', values: col('opened_human') },
      { label: 'Machine-made', cls: 's3', values: col('opened_machine') },
    ]),
    barChart('c-clicked', 'Clicks', days, [
      { label: 'By people', cls: 's1', values: col('clicked_human') },
      { label: 'Machine-made', cls: 's3', values: col('clicked_machine') },
    ]),
    barChart('c-restricted', 'Restrictions added', days, [{ label: 'Restrictions', cls: 's2', values: col('restricted') }]),
  ];
  const totals = h(
    'table',
    { class: 'totals-table' },
    h('caption', {}, `Totals from ${d.start_date} to ${d.end_date} (${d.tz})`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Figure'), h('th', { scope: 'col' }, 'Total'))),
    h('tbody', {}, ...api.FIGURES.map((k) => h('tr', {}, h('th', { scope: 'row' }, LABELS[k]), h('td', { 'data-figure': k }, String(d!.totals[k]))))),
  );
  const count = (caption: string, head: string, rows: Array<[string, number]>, none: string) =>
    rows.length
      ? h(
          'table',
          {},
          h('caption', {}, caption),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, head), h('th', { scope: 'col' }, 'Count'))),
          h('tbody', {}, ...rows.map(([what, n]) => h('tr', {}, h('th', { scope: 'row' }, what), h('td', {}, String(n))))),
        )
      : h('p', {}, none);
  return [
    heading,
    h('p', {}, `Per local day in ${d.tz}. Sent, delivered and bounced count mails by the day they were received, in their state now; opens, clicks, complaints and restrictions count events by the day they happened.`),
    form,
    error,
    h('h2', {}, 'Rates'),
    ratesTable(d),
    h('h2', {}, 'Totals'),
    totals,
    h('h2', {}, 'Per day'),
    h('div', { class: 'charts' }, ...charts),
    ...(await providers),
    h('h2', {}, 'Top bounce reasons'),
    count('The most frequent reasons of the bounced mails (at most 10)', 'Reason', d.bounce_reasons.map((r) => [r.reason ?? '(none recorded)', r.count]), 'No bounce in this range.'),
    h('h2', {}, 'Restrictions added, by reason'),
    count('Restrictions added in the range, per reason', 'Reason', d.restrictions.map((r) => [r.reason, r.count]), 'No restriction added in this range.'),
  ];
}
