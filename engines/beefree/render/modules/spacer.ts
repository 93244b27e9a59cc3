import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { color, length } from '../values.js';

/** spacer -> mj-spacer (height and background only; no padding). */
export const spacer: ModuleBuilder = (m, lines) => {
  const s = resolveNode('spacer.style', m.content.style, 'spacer');
  return [
    lines.node(
      'mj-spacer',
      { height: length(s.height), 'container-background-color': color(s['background-color']), padding: '0px' },
      [],
      m.origin,
    ),
  ];
};
