import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { cleanFragment } from '../fragment.js';
import { paddingAttributes, text } from '../values.js';

/**
 * html -> the author's HTML, without <script> elements and on* attributes (fragment.ts), in an
 * mj-text: a block with the module's padding, in document order. Not mj-raw: inside a column
 * MJML writes mj-raw's content straight into the column's <tbody>, where the HTML parser of
 * browsers and webmails moves any element out of the table ("foster parenting"), so the block
 * would show above the column's other modules.
 */
export const html: ModuleBuilder = (m, lines) => {
  const h = resolveNode('html', m.content, 'html');
  const content = cleanFragment(text(h.html));
  if (content.trim() === '') return [];
  return [lines.leaf('mj-text', { ...paddingAttributes(m.style), 'line-height': '120%', 'font-size': '14px', color: m.inherited.color }, content, m.origin)];
};
