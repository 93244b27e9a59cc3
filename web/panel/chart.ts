import { h } from './dom.js';

/**
 * Bar charts per day (stacked, or side by side to compare two counts) and a rate chart with its
 * thresholds drawn as lines, drawn as SVG with DOM calls (no library, nothing inline for the
 * CSP: colours come from classes in panel.css), with its numbers in a table under it, so the
 * figures are there for a screen reader, for copying, and for a colour-blind reader.
 */

const SVG = 'http://www.w3.org/2000/svg';
function s(tag: string, attrs: Record<string, string | number>, ...children: Array<Node | string>): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

export interface Series {
  label: string;
  /** A class of panel.css giving its fill (s1..s4). */
  cls: string;
  values: number[];
}

/**
 * `grouped`: each day's bars side by side from zero (two counts to compare, one part of the other:
 * all opens and opens by people), instead of stacked parts of a whole.
 */
export function barChart(id: string, title: string, days: string[], series: Series[], layout: 'stacked' | 'grouped' = 'stacked'): HTMLElement {
  const W = 480, H = 170, left = 36, bottom = 22, top = 8;
  const grouped = layout === 'grouped';
  const totals = days.map((_, i) => (grouped ? Math.max(0, ...series.map((x) => x.values[i]!)) : series.reduce((sum, x) => sum + x.values[i]!, 0)));
  const max = Math.max(1, ...totals);
  const step = (W - left) / Math.max(1, days.length);
  const bar = Math.max(2, step * 0.7);
  const slot = grouped ? bar / series.length : bar;
  const y = (v: number) => top + (H - top - bottom) * (1 - v / max);
  const grid: SVGElement[] = [];
  for (const v of new Set([0, Math.round(max / 2), max])) {
    grid.push(s('line', { x1: left, x2: W, y1: y(v), y2: y(v), class: 'grid' }), s('text', { x: left - 4, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, String(v)));
  }
  const bars: SVGElement[] = [];
  days.forEach((day, i) => {
    let base = 0;
    series.forEach((x, k) => {
      const v = x.values[i]!;
      const at = left + i * step + (step - bar) / 2 + (grouped ? k * slot : 0);
      if (v > 0) bars.push(s('rect', { x: at, y: y(base + v), width: slot, height: y(base) - y(base + v), class: x.cls }, s('title', {}, `${day}: ${v} ${x.label}`)));
      if (!grouped) base += v;
    });
  });
  const labels = dayLabels(days, W, H, left, step);
  const total = totals.reduce((a, b) => a + b, 0);
  const peak = totals.indexOf(Math.max(...totals));
  const summary = grouped
    ? `${title}: ${series.map((x) => `${x.values.reduce((a, b) => a + b, 0)} ${x.label.toLowerCase()}`).join(', ')} in ${days.length} days. The numbers are in the table below.`
    : `${title}: ${total} in ${days.length} days${total ? `, most on ${days[peak]} (${totals[peak]})` : ''}. The numbers are in the table below.`;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-desc`, class: 'chart' }, s('title', { id: `${id}-desc` }, summary), ...grid, ...bars, ...labels);
  return framed(id, title, svg, series.map((x) => [x.cls, x.label]), numbers(title, days, series.map((x) => [x.label, x.values.map(String)])));
}

/** A date under the first, middle and last bars, enough to place the others. */
function dayLabels(days: string[], W: number, H: number, left: number, step: number): SVGElement[] {
  const ticks = [...new Set([0, Math.floor((days.length - 1) / 2), days.length - 1])].filter((i) => i >= 0);
  // The first and last dates anchored inside the chart, so neither is cut at the edge.
  const anchor = (i: number) => (i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle');
  const x = (i: number) => (i === 0 ? left : i === days.length - 1 ? W : left + i * step + step / 2);
  return ticks.map((i) => s('text', { x: x(i), y: H - 6, class: 'axis', 'text-anchor': anchor(i) }, days[i]!.slice(5)));
}

/** The numbers of a chart as a table: a row per day, a column per series. */
function numbers(title: string, days: string[], columns: Array<[string, string[]]>): HTMLTableElement {
  return h(
    'table',
    { class: 'numbers' },
    h('caption', {}, `${title} per day`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), ...columns.map(([label]) => h('th', { scope: 'col' }, label)))),
    h('tbody', {}, ...days.map((day, i) => h('tr', {}, h('th', { scope: 'row' }, day), ...columns.map(([, values]) => h('td', {}, values[i]!))))),
  );
}

/** A chart's box: its heading, the drawing, the legend (swatch class, words) and its numbers under a disclosure. */
function framed(id: string, title: string, svg: SVGElement, legend: Array<[string, string]>, table: HTMLTableElement): HTMLElement {
  const list = h('ul', { class: 'legend' }, ...legend.map(([cls, label]) => h('li', {}, h('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }), label)));
  return h('section', { class: 'chart-box', 'aria-labelledby': `${id}-h` }, h('h3', { id: `${id}-h` }, title), svg, list, h('details', {}, h('summary', {}, `${title}: the numbers per day`), table));
}

export interface Threshold {
  /** The status the rate reaches at the line: warning, critical. */
  name: string;
  /** A fraction, as the rates. */
  value: number;
}

/**
 * A rate per day (fractions; null where there is nothing to divide by: no bar, a dash in the
 * table) as bars, with each threshold a horizontal line named in words, so a day over a line
 * reads without telling colours apart. The scale is made for the lines: from half again the
 * highest threshold up to four times it; a day above that is drawn to the top with a ▲ and its
 * rate in its tooltip (and in the table), rather than squashing the lines against zero.
 */
export function rateChart(id: string, title: string, days: string[], rates: Array<number | null>, thresholds: Threshold[], format: (rate: number | null) => string, statuses: string[]): HTMLElement {
  const W = 480, H = 176, left = 48, bottom = 22, top = 14;
  const highest = Math.max(...thresholds.map((x) => x.value));
  const max = Math.min(highest * 4, Math.max(highest * 1.5, ...rates.map((r) => r ?? 0)));
  const step = (W - left) / Math.max(1, days.length);
  const bar = Math.max(2, step * 0.7);
  const y = (v: number) => top + (H - top - bottom) * (1 - Math.min(v, max) / max);
  const grid = [
    s('line', { x1: left, x2: W, y1: y(0), y2: y(0), class: 'grid' }),
    s('line', { x1: left, x2: W, y1: y(max), y2: y(max), class: 'grid' }),
    s('text', { x: left - 4, y: y(0) + 4, class: 'axis', 'text-anchor': 'end' }, '0 %'),
    s('text', { x: left - 4, y: y(max) + 4, class: 'axis', 'text-anchor': 'end' }, format(max)),
  ];
  const bars: SVGElement[] = [];
  days.forEach((day, i) => {
    const v = rates[i];
    if (v === null || v === undefined || v <= 0) return;
    const x = left + i * step + (step - bar) / 2;
    const over = v > max;
    bars.push(s('rect', { x, y: y(v), width: bar, height: y(0) - y(v), class: over ? 's1 over' : 's1' }, s('title', {}, `${day}: ${format(v)} (${statuses[i]})`)));
    if (over) bars.push(s('text', { x: x + bar / 2, y: top - 3, class: 'axis over-mark', 'text-anchor': 'middle' }, '▲'));
  });
  // The names on the left, above their lines: the lowest one below its line when two are close.
  const lines = thresholds.flatMap((x, k) => {
    const close = k === 0 && thresholds.some((o) => o !== x && Math.abs(y(o.value) - y(x.value)) < 14);
    return [
      s('line', { x1: left, x2: W, y1: y(x.value), y2: y(x.value), class: `threshold ${x.name}`, 'data-threshold': x.name, 'data-value': x.value }),
      s('text', { x: left + 4, y: close ? y(x.value) + 11 : y(x.value) - 3, class: `threshold-label ${x.name}` }, `${x.name} ${format(x.value)}`),
    ];
  });
  const over = thresholds.map((x) => `${rates.filter((r) => r !== null && r >= x.value).length} at or over ${x.name} (${format(x.value)})`);
  const rated = rates.filter((r) => r !== null).length;
  const summary = `${title}: ${rated} of ${days.length} days with a rate; ${over.join(', ')}. The numbers are in the table below.`;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-desc`, class: 'chart rate-chart' }, s('title', { id: `${id}-desc` }, summary), ...grid, ...lines, ...bars, ...dayLabels(days, W, H, left, step));
  const legend: Array<[string, string]> = [['s1', title], ...thresholds.map((x): [string, string] => [`line ${x.name}`, `${x.name[0]!.toUpperCase()}${x.name.slice(1)} from ${format(x.value)}`])];
  if (rates.some((r) => r !== null && r > max)) legend.push(['mark', `▲ above ${format(max)}: the rate is in the table`]);
  return framed(id, title, svg, legend, numbers(title, days, [['Rate', rates.map(format)], ['Status', statuses]]));
}
