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
