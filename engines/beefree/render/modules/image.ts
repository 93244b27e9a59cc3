import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { align, length, linkAttributes, paddings, paddingAttributes, pixels, str, text, type Align } from '../values.js';

/**
 * image -> mj-image. Width: `percWidth` (a share of the column), else the editor's computed
 * width for a "fixedwidth" image, else the image's own width; none of them means the column's
 * full width. MJML caps it at the column. No height: a fixed height would distort the image
 * when it shrinks on a phone. An image without src renders nothing (a broken-image box helps nobody).
 */
export const image: ModuleBuilder = (m, lines) => {
  const i = resolveNode('image', m.content, 'image');
  const src = str(i.src);
  if (src === undefined) return [];
  return [
    lines.node(
      'mj-image',
      {
        src,
        alt: text(i.alt),
        title: str(i.title),
        ...linkAttributes(i),
        width: imageWidth(m.content, m.computed, m.style, m.columnWidth),
        align: imageAlign(m.computed.class, m.style['text-align']),
        'border-radius': length(m.style['border-radius']),
        ...paddingAttributes(m.style),
      },
      [],
      m.origin,
    ),
  ];
};

function imageWidth(
  content: Record<string, unknown>,
  computed: Record<string, string | number | boolean>,
  style: Record<string, string | number | boolean>,
  columnWidth: number,
): string | undefined {
  const p = paddings(style);
  const available = Math.max(1, columnWidth - (pixels(p.left) ?? 0) - (pixels(p.right) ?? 0));
  const perc = typeof content.percWidth === 'number' && content.percWidth > 0 && content.percWidth < 100 ? content.percWidth : undefined;
  const cls = String(computed.class ?? '');
  const px =
    perc !== undefined
      ? (available * perc) / 100
      : cls.includes('autowidth')
        ? (pixels(content.width) ?? pixels(computed.width))
        : (pixels(computed.width) ?? pixels(content.width));
  if (px === undefined) return undefined;
  return `${Math.max(1, Math.min(Math.round(px), Math.round(available)))}px`;
}

/** "center fixedwidth" (the editor's class) names the alignment; else the block's text-align. */
export function imageAlign(cls: unknown, textAlign: unknown): Align | undefined {
  for (const token of String(cls ?? '').split(' ')) {
    const a = align(token);
    if (a) return a;
  }
  return align(textAlign);
}
