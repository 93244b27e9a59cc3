import type { Inherited, ModuleInput } from '../context.js';
import { element } from '../markup.js';
import type { Attributes, Lines, MjmlNode } from '../mjml-tree.js';
import { color, fontStack, length, obj, paddingAttributes, str, textAlign, unprefixed, type Json } from '../values.js';

/** A resolved style node (resolveNode): declared fields with the document's values or defaults. */
export type Resolved = Record<string, string | number | boolean>;

/** mj-text's typography attributes from a text style; the colour falls back to the row's/body's. */
export function typographyAttributes(s: Resolved, inherited: Inherited): Attributes {
  return {
    'font-family': fontStack(s['font-family'], inherited.fontFamily),
    'font-size': length(s['font-size']),
    'font-weight': str(s['font-weight']),
    'line-height': lineHeight(s['line-height']),
    'letter-spacing': length(s['letter-spacing']),
    color: color(s.color) ?? inherited.color,
  };
}

/**
 * The mj-text of a module whose content is rich text (paragraph, list, legacy text): the module's
 * padding, its text style's typography and alignment, and the cleaned HTML in the module's own
 * direction.
 */
export function textBlock(m: ModuleInput, lines: Lines, s: Resolved, html: string): MjmlNode[] {
  return [
    lines.leaf(
      'mj-text',
      { ...paddingAttributes(m.style), ...typographyAttributes(s, m.inherited), align: textAlign(s['text-align']) },
      withDirection(html, obj(m.content.style), m.inherited),
      m.origin,
    ),
  ];
}

/** `120%`, `1.5`, `24px` as MJML's line-height takes them; `normal` (and unreadable values) as absent. */
export function lineHeight(value: unknown): string | undefined {
  const v = str(value);
  if (v === undefined || v.toLowerCase() === 'normal') return undefined;
  return v;
}

/**
 * Content whose direction differs from the document's, wrapped in a `dir` block (MJML's text
 * components have no direction attribute). Only an explicit `direction` counts: the declared
 * default (ltr) must not turn every block of a right-to-left document around.
 */
export function withDirection(html: string, style: Json, inherited: Inherited): string {
  const raw = str(style.direction);
  const dir = raw === undefined ? undefined : unprefixed(raw).toLowerCase();
  if ((dir !== 'rtl' && dir !== 'ltr') || dir === inherited.dir) return html;
  return element('div', { dir, style: `direction:${dir};` }, html);
}
