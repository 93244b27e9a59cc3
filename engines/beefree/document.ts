import { checkHtmlEstimate } from './check/html-estimate.js';
import { checkDocument, checkMeta, checkRenderedHtml, sortFindings, type CheckFailure } from './check/index.js';
import type { Finding } from './findings.js';
import { isRecord } from './format/nodes.js';
import { renderDocument } from './render/index.js';

export type { Finding } from './findings.js';

export interface ProcessedDocument {
  /** Errors (level error, each with its 422 code); non-empty means refuse the write. */
  errors: Finding[];
  /** Warnings and suggestions, to store and return. */
  findings: Finding[];
  /** The generated HTML and its text alternative; null when config is null or has errors. */
  html: string | null;
  text: string | null;
  /** Optional checks that threw and were skipped (each also a check_failed warning): for the log. */
  checkFailures: CheckFailure[];
}

/**
 * What create, PATCH and validate do with a design document: check it (schema, module types,
 * links, sizes...); when it has no error, render it (engines/beefree/render) and check the
 * HTML (size, client support). Errors stop the work where they are found: a document whose
 * HTML cannot fit the maximum by its shape alone (check/html-estimate.ts) is refused before
 * anything else, a document with an error is not rendered, an HTML over the maximum is not
 * returned. An optional check that throws is skipped and reported (check/contained.ts). The template's subject and
 * preheader are checked too (suggestions), with or without a document; the preheader goes into
 * the HTML, and the subject (else head.meta.title) becomes its <title>. Deterministic: same
 * input, same findings in the same order.
 */
export async function processDocument(
  config: unknown | null,
  meta: { subject: string | null; preheader: string | null },
): Promise<ProcessedDocument> {
  const metaFindings = checkMeta(meta);
  const checkFailures: CheckFailure[] = [];
  if (config === null || config === undefined) return { errors: [], findings: metaFindings, html: null, text: null, checkFailures };

  const tooLarge = checkHtmlEstimate(config);
  if (tooLarge.length > 0) return { errors: tooLarge, findings: metaFindings, html: null, text: null, checkFailures };

  const checked = checkDocument(config, checkFailures);
  const errors = checked.filter((f) => f.level === 'error');
  const notes = checked.filter((f) => f.level !== 'error');
  if (errors.length > 0) return { errors, findings: sortFindings(config, [...metaFindings, ...notes]), html: null, text: null, checkFailures };

  const rendered = await renderDocument(config, { preheader: nonEmpty(meta.preheader), title: nonEmpty(meta.subject) ?? metaTitle(config) });
  const htmlFindings = checkRenderedHtml(rendered.html, checkFailures);
  const htmlErrors = htmlFindings.filter((f) => f.level === 'error');
  const findings = sortFindings(config, [...metaFindings, ...notes, ...rendered.findings, ...htmlFindings.filter((f) => f.level !== 'error')]);
  if (htmlErrors.length > 0) return { errors: htmlErrors, findings, html: null, text: null, checkFailures };
  return { errors: [], findings, html: rendered.html, text: rendered.text, checkFailures };
}

function nonEmpty(s: string | null): string | null {
  return s !== null && s.trim() !== '' ? s : null;
}

function metaTitle(config: unknown): string | null {
  const page = isRecord(config) ? config.page : undefined;
  const head = isRecord(page) ? page.head : undefined;
  const meta = isRecord(head) ? head.meta : undefined;
  const title = isRecord(meta) ? meta.title : undefined;
  return typeof title === 'string' && title.trim() !== '' ? title : null;
}
