import mjml2html, { type MjmlValidationError } from 'mjml-browser';
import type { Finding } from '../findings.js';
import { withWebFonts } from './css-text.js';
import { buildMjml, webFonts, type RenderMeta } from './document.js';
import { Lines } from './mjml-tree.js';
import { templatePlainText } from './plain-text.js';

export type { RenderMeta } from './document.js';

export interface RenderedTemplate {
  html: string;
  /** The plain-text alternative, derived from the HTML. */
  text: string;
  /** MJML's validation errors, as warnings at the node they come from (rule mjml_validation). */
  findings: Finding[];
}

/**
 * A design document (already schema-valid) -> email HTML, its text alternative and the
 * renderer's findings. The document is turned into MJML's JSON form (document.ts, rows.ts,
 * modules/) and rendered by MJML 5: table layout, inline styles, responsive columns, Outlook
 * conditionals. Soft validation: MJML renders whatever it can and lists what it refused; each
 * MJML node carries a line number that names the document node it was built from.
 * Merge tags ({{ }}, {% %}) pass through untouched, to be filled per recipient at send time.
 */
export async function renderDocument(doc: unknown, meta: RenderMeta): Promise<RenderedTemplate> {
  const lines = new Lines();
  const tree = buildMjml(doc, meta, lines);
  const result = await mjml2html(tree, {
    validationLevel: 'soft',
    // Node 20: MJML 5's CSS minifier needs Node 22; the HTML is sent as is.
    minify: false,
    // No fonts of MJML's own: only the document's web fonts are linked.
    fonts: {},
    ignoreIncludes: true,
  });
  const html = withWebFonts(result.html, webFonts(doc));
  return { html, text: templatePlainText(html), findings: result.errors.map((e) => finding(e, lines)) };
}

function finding(error: MjmlValidationError, lines: Lines): Finding {
  const origin = lines.origin(error.line) ?? { uuid: null, pointer: '' };
  return {
    level: 'warning',
    rule: 'mjml_validation',
    uuid: origin.uuid,
    pointer: origin.pointer,
    message: `${error.tagName}: ${error.message}`,
  };
}
