/**
 * Size limits of a template. MAX_CONFIG_BYTES is the spec's (a config over it is refused: 413
 * from the API's body check, invalid_document from the document check). The HTML limits are
 * Cartero's choice, written down in docs/templates.md.
 */

/** The design document, as UTF-8 bytes of its JSON (spec: "at most 262144 bytes"). */
export const MAX_CONFIG_BYTES = 262_144;

/**
 * Gmail clips a message whose HTML source passes about 102 KB and shows "[Message clipped]"
 * (the tracking pixel at the end is then never loaded): a warning above this many UTF-8 bytes.
 */
export const GMAIL_CLIP_BYTES = 102 * 1024;

/**
 * The generated HTML may not exceed this (an error, template_html_too_large): five times Gmail's
 * clipping point, far beyond any design that reads well in a mail client, and a bound on what
 * every send has to carry and rewrite per recipient.
 */
export const MAX_HTML_BYTES = 512 * 1024;

/**
 * The fewest HTML bytes the renderer writes for each part of a document, whatever its content:
 * the skeleton (head, resets, body) once, each row (its section, even without columns), each
 * column, and each module of a kind that always writes an element (paragraph, heading, list,
 * text, button, divider, spacer) unless hidden on HTML. Measured on MJML 5.4 with the barest
 * parts (`node dist/bench/templates.js` prints nothing of this; see docs/templates.md, "Limits",
 * for the measurement): skeleton 1531, row without columns 878, each column 789 more, spacer of
 * height 0 289, empty paragraph 422, empty button 1073. Each floor here is under its measure by
 * about a tenth, so the estimate built from them (check/html-estimate.ts) stays under the real
 * size of every document: one it puts over MAX_HTML_BYTES cannot render under it, and is refused
 * before MJML spends seconds on it (2,717 one-button rows took 3.8 s to be told their HTML was
 * too large).
 */
export const HTML_FLOOR_BYTES = { document: 1_400, row: 800, column: 700, module: 250 } as const;

