import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { cleanFragment } from '../fragment.js';
import { color, length, obj, pixels, str, text, unprefixed } from '../values.js';
import { textBlock } from './typography.js';

/** list -> mj-text holding the <ul>/<ol>, with the module's indent, item spacing, bullets and first number inline. */
export const list: ModuleBuilder = (m, lines) => {
  const l = resolveNode('list', m.content, 'list');
  const s = resolveNode('list.style', m.content.style, 'list');
  const c = resolveNode('list.computedStyle', m.content.computedStyle, 'list');
  const start = pixels(c.startListFrom); // a positive whole number, read like a length without unit
  const html = cleanFragment(text(l.html), {
    linkColor: color(c.linkColor) ?? m.inherited.linkColor,
    list: {
      indent: length(c.liIndent),
      spacing: length(c.liSpacing),
      // Only as written: the declared default (disc) would turn a numbered list into bullets.
      type: keyword(obj(m.content.computedStyle).listStyleType),
      position: keyword(c.listStylePosition),
      start: start !== undefined && Number.isInteger(start) ? String(start) : undefined,
    },
  });
  return textBlock(m, lines, s, html);
};

/** A CSS keyword (disc, lower-alpha, inside...): letters and dashes only, as it goes into a style attribute. */
function keyword(value: unknown): string | undefined {
  const v = str(value);
  if (v === undefined) return undefined;
  const k = unprefixed(v).toLowerCase();
  for (const ch of k) if ((ch < 'a' || ch > 'z') && ch !== '-') return undefined;
  return k;
}
