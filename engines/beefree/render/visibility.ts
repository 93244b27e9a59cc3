import type { Lines, MjmlNode, Origin } from './mjml-tree.js';

/**
 * hideContentOnMobile / hideContentOnDesktop. MJML has no attribute for them: the node gets a
 * class (css-class, which MJML puts on the block's table cell or section) and one mj-style
 * holds the media queries. Clients without media queries (Outlook desktop, some apps) show
 * both; for Outlook desktop, content hidden on desktop is also left inside an `[if !mso]`
 * conditional comment, which Outlook's Word engine skips.
 */
export const HIDE_ON_MOBILE = 'cartero-hide-mobile';
export const HIDE_ON_DESKTOP = 'cartero-hide-desktop';

/** MJML's breakpoint (mj-breakpoint, default 480px): columns side by side from this width up. */
export const BREAKPOINT_PX = 480;

export const VISIBILITY_CSS = [
  `@media only screen and (max-width:${BREAKPOINT_PX - 1}px) { .${HIDE_ON_MOBILE} { display:none !important; max-height:0 !important; overflow:hidden !important; mso-hide:all !important; } }`,
  `@media only screen and (min-width:${BREAKPOINT_PX}px) { .${HIDE_ON_DESKTOP} { display:none !important; max-height:0 !important; overflow:hidden !important; } }`,
].join('\n');

export interface Visibility {
  mobile: boolean;
  desktop: boolean;
}

/** The nodes with their visibility class; desktop-hidden ones inside an `[if !mso]` comment pair. */
export function applyVisibility(nodes: MjmlNode[], hidden: Visibility, lines: Lines, origin: Origin): MjmlNode[] {
  if (nodes.length === 0 || (!hidden.mobile && !hidden.desktop)) return nodes;
  const cls = [hidden.mobile ? HIDE_ON_MOBILE : '', hidden.desktop ? HIDE_ON_DESKTOP : ''].filter(Boolean).join(' ');
  for (const node of nodes) {
    node.attributes['css-class'] = node.attributes['css-class'] ? `${node.attributes['css-class']} ${cls}` : cls;
  }
  if (!hidden.desktop) return nodes;
  return [lines.leaf('mj-raw', {}, '<!--[if !mso]><!-->', origin), ...nodes, lines.leaf('mj-raw', {}, '<!--<![endif]-->', origin)];
}
