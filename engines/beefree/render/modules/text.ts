import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { cleanFragment } from '../fragment.js';
import { color, text as textOf } from '../values.js';
import { textBlock } from './typography.js';

/** text (the legacy module before paragraph) -> mj-text; its HTML carries most of its own styling. */
export const text: ModuleBuilder = (m, lines) => {
  const t = resolveNode('text', m.content, 'text');
  const s = resolveNode('text.style', m.content.style, 'text');
  const c = resolveNode('text.computedStyle', m.content.computedStyle, 'text');
  // Paragraphs without margins, as the editor shows them (the module has no spacing setting).
  const html = cleanFragment(textOf(t.html), { linkColor: color(c.linkColor) ?? m.inherited.linkColor, paragraphSpacing: '0px' });
  return textBlock(m, lines, s, html);
};
