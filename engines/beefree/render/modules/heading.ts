import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { cleanFragment } from '../fragment.js';
import { element, style } from '../markup.js';
import { align, color, obj, paddingAttributes, str, text, textAlign } from '../values.js';
import { typographyAttributes } from './typography.js';

const LEVELS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/**
 * heading -> mj-text holding an <hN>: a real heading for screen readers and the text part, with
 * its typography inline on the hN (clients give headings their own size and margins otherwise).
 */
export const heading: ModuleBuilder = (m, lines) => {
  const h = resolveNode('heading', m.content, 'heading');
  const s = resolveNode('heading.style', m.content.style, 'heading');
  const level = LEVELS.has(String(h.title).toLowerCase()) ? String(h.title).toLowerCase() : 'h1';
  const typography = typographyAttributes(s, m.inherited);
  const rawDir = str(obj(m.content.style).direction)?.toLowerCase();
  const dir = (rawDir === 'rtl' || rawDir === 'ltr') && rawDir !== m.inherited.dir ? rawDir : undefined;
  const inner = cleanFragment(text(h.text), { linkColor: color(s['link-color']) ?? m.inherited.linkColor });
  const hn = element(
    level,
    {
      dir,
      style: style({
        margin: '0',
        color: typography.color,
        direction: dir,
        'font-family': typography['font-family'],
        'font-size': typography['font-size'],
        'font-weight': typography['font-weight'],
        'letter-spacing': typography['letter-spacing'],
        'line-height': typography['line-height'],
        'text-align': textAlign(s['text-align']),
      }),
    },
    inner,
  );
  return [
    lines.leaf(
      'mj-text',
      { ...paddingAttributes(m.style), ...typography, align: textAlign(s['text-align']) ?? align(m.style['text-align']) },
      hn,
      m.origin,
    ),
  ];
};
