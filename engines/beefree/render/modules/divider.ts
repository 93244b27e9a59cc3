import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { align, length, paddingAttributes, parseBorder, str } from '../values.js';

/** divider -> mj-divider; the editor's `border-top` shorthand split into MJML's width, style and colour. */
export const divider: ModuleBuilder = (m, lines) => {
  const s = resolveNode('divider.style', m.content.style, 'divider');
  const line = parseBorder(str(s['border-top']) ?? '') ?? { width: '1px', style: 'solid', color: '#BBBBBB' };
  const hidden = line.style === 'none' || line.style === 'hidden';
  return [
    lines.node(
      'mj-divider',
      {
        'border-width': hidden ? '0px' : line.width,
        'border-style': hidden ? 'solid' : line.style,
        'border-color': line.color ?? 'transparent',
        width: length(s.width),
        align: align(m.computed.align),
        ...paddingAttributes(m.style),
      },
      [],
      m.origin,
    ),
  ];
};
