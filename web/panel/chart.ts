import { h } from './dom.js';

/**
 * A stacked bar chart per day, drawn as SVG with DOM calls (no library, nothing inline for the
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

export function barChart(id: string, title: string, days: string[], series: Series[]): HTMLElement {
  const W = 480, H = 170, left = 36, bottom = 22, top = 8;
  const totals = days.map((_, i) => series.reduce((sum, x) => sum + x.values[i]!, 0));
  const max = Math.max(1, ...totals);
  const step = (W - left) / Math.max(1, days.length);
  const bar = Math.max(2, step * 0.7);
  const y = (v: number) => top + (H - top - bottom) * (1 - v / max);
  const grid: SVGElement[] = [];
  for (const v of new Set([0, Math.round(max / 2), max])) {
    grid.push(s('line', { x1: left, x2: W, y1: y(v), y2: y(v), class: 'grid' }), s('text', { x: left - 4, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, String(v)));
  }
  const bars: SVGElement[] = [];
  days.forEach((day, i) => {
    let base = 0;
    for (const x of series) {
      const v = x.values[i]!;
      if (v > 0) bars.push(s('rect', { x: left + i * step + (step - bar) / 2, y: y(base + v), width: bar, height: y(base) - y(base + v), class: x.cls }, s('title', {}, `${day}: ${v} ${x.label}`)));
      base += v;
    }
  });
  // A date under the first, middle and last bars, enough to place the others.
  const ticks = [...new Set([0, Math.floor((days.length - 1) / 2), days.length - 1])].filter((i) => i >= 0);
  // The first and last dates anchored inside the chart, so neither is cut at the edge.
  const anchor = (i: number) => (i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle');
  const x = (i: number) => (i === 0 ? left : i === days.length - 1 ? W : left + i * step + step / 2);
  const labels = ticks.map((i) => s('text', { x: x(i), y: H - 6, class: 'axis', 'text-anchor': anchor(i) }, days[i]!.slice(5)));
  const total = totals.reduce((a, b) => a + b, 0);
  const peak = totals.indexOf(Math.max(...totals));
  const summary = `${title}: ${total} in ${days.length} days${total ? `, most on ${days[peak]} (${totals[peak]})` : ''}. The numbers are in the table below.`;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-desc`, class: 'chart' }, s('title', { id: `${id}-desc` }, summary), ...grid, ...bars, ...labels);
  const legend = h('ul', { class: 'legend' }, ...series.map((x) => h('li', {}, h('span', { class: `swatch ${x.cls}`, 'aria-hidden': 'true' }), x.label)));
  const table = h(
    'table',
    { class: 'numbers' },
    h('caption', {}, `${title} per day`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), ...series.map((x) => h('th', { scope: 'col' }, x.label)))),
    h('tbody', {}, ...days.map((day, i) => h('tr', {}, h('th', { scope: 'row' }, day), ...series.map((x) => h('td', {}, String(x.values[i])))))),
  );
  return h('section', { class: 'chart-box', 'aria-labelledby': `${id}-h` }, h('h3', { id: `${id}-h` }, title), svg, legend, h('details', {}, h('summary', {}, `${title}: the numbers per day`), table));
}
