import type { Finding } from '../findings.js';
import { MAX_CONFIG_BYTES } from '../format/limits.js';
import { checkContrast } from './contrast.js';
import { contained, type CheckFailure } from './contained.js';
import { finding } from './finding.js';
import { checkGrid } from './grid.js';
import { checkHtmlModules } from './html-module.js';
import { checkCssSupport, checkHtmlSize } from './html-output.js';
import { checkImages } from './images.js';
import { checkLinks } from './links.js';
import { checkModuleTypes } from './module-types.js';
import { sortFindings } from './pointer.js';
import { checkSchema } from './schema.js';
import { checkUuids } from './uuids.js';
import { checkVendorCss } from './vendor-css.js';

export { checkMeta } from './meta.js';
export type { CheckFailure } from './contained.js';
export { checkCssSupport, checkHtmlSize } from './html-output.js';
export { sortFindings } from './pointer.js';

/** The document's size as the limit counts it: UTF-8 bytes of its JSON. */
export function documentBytes(doc: unknown): number {
  return Buffer.byteLength(JSON.stringify(doc) ?? '', 'utf8');
}

/**
 * Everything that can be said about a document before rendering it, errors first in importance
 * but all in one list, in document order. A document over the size limit gets that error alone
 * (nothing else is worth the time). The other rule families run independently, each on what it
 * can read, so one wrong node does not hide the findings elsewhere. The families that only advise
 * (warnings, suggestions) are contained: one that throws is skipped and named in `failures`
 * (check/contained.ts).
 */
export function checkDocument(doc: unknown, failures: CheckFailure[] = []): Finding[] {
  const bytes = documentBytes(doc);
  if (bytes > MAX_CONFIG_BYTES) {
    return [finding('document_too_large', '', null, `the document is ${bytes} bytes of JSON, over the maximum of ${MAX_CONFIG_BYTES}`, { bytes, max_bytes: MAX_CONFIG_BYTES })];
  }
  const findings = [
    ...checkSchema(doc),
    ...checkModuleTypes(doc),
    ...checkLinks(doc),
    ...OPTIONAL_DOCUMENT_CHECKS.flatMap(([name, check]) => contained(name, failures, () => check(doc))),
  ];
  return sortFindings(doc, findings);
}

/** The document checks that only advise, by the name a check_failed finding gives them. */
export const OPTIONAL_DOCUMENT_CHECKS: Array<[name: string, check: (doc: unknown) => Finding[]]> = [
  ['images', checkImages],
  ['uuids', checkUuids],
  ['grid', checkGrid],
  ['contrast', checkContrast],
  ['html_modules', checkHtmlModules],
  ['vendor_css', checkVendorCss],
];

/** The generated HTML: its size, and the CSS the main clients do not support (advice: contained). */
export function checkRenderedHtml(html: string, failures: CheckFailure[] = []): Finding[] {
  const size = checkHtmlSize(html);
  if (size.some((f) => f.level === 'error')) return size;
  return [...size, ...contained('css_client_support', failures, () => checkCssSupport(html))];
}
