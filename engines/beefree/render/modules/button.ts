import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { cleanFragment } from '../fragment.js';
import { align, borderAttributes, color, fontStack, length, linkAttributes, paddingAttributes, paddings, str, text } from '../values.js';
import { lineHeight } from './typography.js';

/**
 * button -> mj-button: MJML's bulletproof button (a table cell carrying the colour, the link
 * inside, so Outlook shows the shape). The label is inline HTML: the editor's wrappers
 * (`<div><p>...`) are flattened to one line of text. Without href MJML writes no link.
 */
export const button: ModuleBuilder = (m, lines) => {
  const b = resolveNode('button', m.content, 'button');
  const s = resolveNode('button.style', m.content.style, 'button');
  const inner = paddings(s);
  const width = str(s.width);
  return [
    lines.leaf(
      'mj-button',
      {
        ...linkAttributes(b),
        title: str(b.title),
        'background-color': color(s['background-color']) ?? 'transparent',
        color: color(s.color) ?? m.inherited.color,
        'font-family': fontStack(s['font-family'], m.inherited.fontFamily),
        'font-size': length(s['font-size']),
        'font-weight': str(s['font-weight']),
        'line-height': lineHeight(s['line-height']),
        'letter-spacing': length(s['letter-spacing']),
        ...borderAttributes(s),
        'border-radius': length(s['border-radius']),
        'inner-padding': `${inner.top} ${inner.right} ${inner.bottom} ${inner.left}`,
        width: width === undefined || width.toLowerCase() === 'auto' ? undefined : length(width),
        align: align(m.style['text-align']),
        ...paddingAttributes(m.style),
      },
      cleanFragment(text(b.label), { inline: true }),
      m.origin,
    ),
  ];
};
