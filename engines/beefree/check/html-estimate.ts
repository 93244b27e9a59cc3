import type { Finding } from '../findings.js';
import { HTML_FLOOR_BYTES, MAX_HTML_BYTES } from '../format/limits.js';
import { isRecord, kindOfType } from '../format/nodes.js';
import { finding } from './finding.js';

/** Kinds whose module always writes an element, content or not (the others may write nothing). */
const ALWAYS_WRITTEN = new Set(['paragraph', 'heading', 'list', 'text', 'button', 'divider', 'spacer']);

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export interface HtmlEstimate {
  /** The fewest bytes the generated HTML can have (HTML_FLOOR_BYTES summed over the parts). */
  minBytes: number;
  rows: number;
  columns: number;
  /** Modules that always write an element. */
  modules: number;
}

/**
 * A floor of the generated HTML's size, from the document's shape alone: one pass over rows,
 * columns and modules, reading only what decides whether a part is written (no schema, no
 * rendering), so it costs a millisecond where rendering costs seconds. Tolerates any JSON:
 * what is not an array or object counts as absent.
 */
export function estimateHtml(doc: unknown): HtmlEstimate {
  const page = isRecord(doc) && isRecord(doc.page) ? doc.page : {};
  let rows = 0;
  let columns = 0;
  let modules = 0;
  for (const row of list(page.rows)) {
    rows++;
    for (const column of list(isRecord(row) ? row.columns : undefined)) {
      columns++;
      for (const module of list(isRecord(column) ? column.modules : undefined)) {
        if (!isRecord(module)) continue;
        const kind = kindOfType(module.type);
        const descriptor = isRecord(module.descriptor) ? module.descriptor : {};
        const computed = isRecord(descriptor.computedStyle) ? descriptor.computedStyle : {};
        if (kind !== undefined && ALWAYS_WRITTEN.has(kind) && computed.hideContentOnHtml !== true) modules++;
      }
    }
  }
  const f = HTML_FLOOR_BYTES;
  return { minBytes: f.document + rows * f.row + columns * f.column + modules * f.module, rows, columns, modules };
}

/**
 * The bound checked before rendering: a document whose HTML floor is already over
 * MAX_HTML_BYTES cannot render under it, so it gets template_html_too_large at once
 * (html_estimate_too_large), and nothing else is checked or rendered. The floors are under the
 * measured sizes, so no document that would render under the maximum is refused here.
 */
export function checkHtmlEstimate(doc: unknown): Finding[] {
  const e = estimateHtml(doc);
  if (e.minBytes <= MAX_HTML_BYTES) return [];
  return [
    finding(
      'html_estimate_too_large',
      '/page/rows',
      null,
      `${e.rows} rows, ${e.columns} columns and ${e.modules} modules make at least ${e.minBytes} bytes of HTML, over the maximum of ${MAX_HTML_BYTES}`,
      { estimated_min_bytes: e.minBytes, max_bytes: MAX_HTML_BYTES, rows: e.rows, columns: e.columns, modules: e.modules },
    ),
  ];
}
