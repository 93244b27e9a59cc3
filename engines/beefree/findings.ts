/**
 * What checking a design document says about it. One shape for the three levels, so the API
 * returns errors (in a 422's errors[]) and warnings/suggestions (in `findings`) from one list.
 */
export type FindingLevel = 'error' | 'warning' | 'suggestion';

export interface Finding {
  level: FindingLevel;
  /** A stable rule name integrators can switch on (e.g. image_missing_alt, invalid_type). */
  rule: string;
  /** The uuid of the node the finding is about, or of its nearest ancestor that has one. */
  uuid: string | null;
  /** JSON Pointer into the document (RFC 6901); '' for the document itself. */
  pointer: string;
  message: string;
  /**
   * Errors only: the 422 errors[] code the finding is reported under (invalid_document,
   * essential_not_supported, template_html_too_large, template_render_timeout).
   */
  code?: 'invalid_document' | 'essential_not_supported' | 'template_html_too_large' | 'template_render_timeout';
  /** Extra facts for the client (e.g. kinds, max_bytes). */
  params?: Record<string, unknown>;
}
