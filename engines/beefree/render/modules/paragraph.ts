import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { cleanFragment } from '../fragment.js';
import { color, length, text } from '../values.js';
import { textBlock } from './typography.js';

/** paragraph -> mj-text with the paragraph's typography; paragraphs spaced as the editor shows them. */
export const paragraph: ModuleBuilder = (m, lines) => {
  const p = resolveNode('paragraph', m.content, 'paragraph');
  const s = resolveNode('paragraph.style', m.content.style, 'paragraph');
  const c = resolveNode('paragraph.computedStyle', m.content.computedStyle, 'paragraph');
  const html = cleanFragment(text(p.html), {
    linkColor: color(c.linkColor) ?? m.inherited.linkColor,
    paragraphSpacing: length(c.paragraphSpacing) ?? '0px',
  });
  return textBlock(m, lines, s, html);
};
