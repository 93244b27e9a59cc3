import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { textContent } from '../mjml-tree.js';
import { align, arr, color, fontStack, length, linkAttributes, obj, paddings, paddingAttributes, str, text } from '../values.js';

/**
 * menu -> mj-navbar with an mj-navbar-link per item; the editor's hamburger (collapsed on
 * mobile) is MJML's. Not rendered: the separator between items and the vertical layout (MJML's
 * navbar has neither).
 */
export const menu: ModuleBuilder = (m, lines) => {
  const computed = obj(m.descriptor.computedStyle);
  const spacing = paddings(resolveNode('descriptor.computedStyle.menuItemsSpacing', computed.menuItemsSpacing, 'menu'));
  const hamburger = resolveNode('descriptor.computedStyle.hamburger', computed.hamburger, 'menu');
  const linkColor = color(m.computed.linkColor) ?? color(m.style.color) ?? m.inherited.linkColor;
  const links = arr(m.content.items).map((raw, i) => {
    const item = resolveNode('menuItemsList.items[]', raw, 'menu');
    const link = resolveNode('menuItemsList.items[].link', obj(raw).link, 'menu');
    return lines.leaf(
      'mj-navbar-link',
      {
        ...linkAttributes(link),
        color: linkColor,
        'font-family': fontStack(m.style['font-family'], m.inherited.fontFamily),
        'font-size': length(m.style['font-size']),
        'font-weight': str(m.style['font-weight']),
        'letter-spacing': length(m.style['letter-spacing']),
        'text-transform': 'none',
        'padding-top': spacing.top,
        'padding-right': spacing.right,
        'padding-bottom': spacing.bottom,
        'padding-left': spacing.left,
      },
      textContent(text(item.text)),
      { uuid: m.origin.uuid, pointer: `${m.origin.pointer}/descriptor/menuItemsList/items/${i}` },
    );
  });
  if (links.length === 0) return [];
  return [
    lines.node(
      'mj-navbar',
      {
        align: align(m.style['text-align']),
        ...paddingAttributes(m.style),
        ...(hamburger.mobile === true
          ? { hamburger: 'hamburger', 'ico-color': color(hamburger.foregroundColor), 'ico-font-size': length(hamburger.iconSize) }
          : {}),
      },
      links,
      m.origin,
    ),
  ];
};
