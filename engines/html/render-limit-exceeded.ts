/**
 * Bounds on one mail's rendering, so no message can hold a worker's event loop: the size of each
 * body part once merge tags are filled, and the time the whole rendering may take (checked
 * between its steps, each of which runs in linear time), and the HTML a text part is derived from
 * (plain-text.ts). Over a bound, renderMail throws RenderLimitExceeded and the worker drops the
 * mail with the reason (docs/sending.md).
 */
export class RenderLimitExceeded extends Error {
  override name = 'RenderLimitExceeded';
}
