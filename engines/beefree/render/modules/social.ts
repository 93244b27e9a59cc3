import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { textContent } from '../mjml-tree.js';
import { align, arr, color, fontStack, length, linkAttributes, obj, paddings, paddingAttributes, pixels, str, text } from '../values.js';

/**
 * social -> mj-social with one mj-social-element per icon (the icon set's own image, never
 * MJML's built-in networks: no `name`, so no MJML share URL or colour is added).
 */
export const social: ModuleBuilder = (m, lines) => {
  const size = pixels(m.computed.iconsDefaultWidth) ?? 32;
  const padding = str(m.computed.padding);
  const elements = arr(m.content.icons).flatMap((raw, i) => {
    const icon = resolveNode('iconsList.icons[]', raw, 'social');
    const image = resolveNode('iconsList.icons[].image', obj(raw).image, 'social');
    const src = str(image.src);
    if (src === undefined) return [];
    return [
      lines.leaf(
        'mj-social-element',
        {
          ...iconImage(src, image),
          padding: padding && isPaddingShorthand(padding) ? padding : '0px',
          'border-radius': '0px',
          'icon-size': `${size}px`,
        },
        textContent(text(icon.text)),
        iconOrigin(m, i),
      ),
    ];
  });
  if (elements.length === 0) return [];
  return [
    lines.node(
      'mj-social',
      { mode: 'horizontal', align: align(m.style['text-align']), 'icon-size': `${size}px`, ...paddingAttributes(m.style) },
      elements,
      m.origin,
    ),
  ];
};

/**
 * icons -> mj-social too (an image with an optional text beside it, linked or not): the closest
 * MJML component. Text above or below an icon (textPosition top/bottom) is shown beside it:
 * mj-social-element places text only left or right.
 */
export const icons: ModuleBuilder = (m, lines) => {
  const spacing = paddings(resolveNode('descriptor.computedStyle.iconSpacing', obj(m.descriptor.computedStyle).iconSpacing, 'icons'));
  const defaultHeight = pixels(m.computed.iconHeight) ?? 32;
  const elements = arr(m.content.icons).flatMap((raw, i) => {
    const icon = resolveNode('iconsList.icons[]', raw, 'icons');
    const src = str(icon.image);
    if (src === undefined) return [];
    const height = pixels(icon.height) ?? defaultHeight;
    const width = pixels(icon.width) ?? height;
    return [
      lines.leaf(
        'mj-social-element',
        {
          ...iconImage(src, icon),
          'icon-size': `${Math.round(width)}px`,
          'icon-height': `${Math.round(height)}px`,
          'icon-position': icon.textPosition === 'left' ? 'right' : 'left',
          padding: `${spacing.top} ${spacing.right} ${spacing.bottom} ${spacing.left}`,
          'border-radius': '0px',
          color: color(m.style.color) ?? m.inherited.color,
          'font-family': fontStack(m.style['font-family'], m.inherited.fontFamily),
          'font-size': length(m.style['font-size']),
          'font-weight': str(m.style['font-weight']),
        },
        textContent(text(icon.text)),
        iconOrigin(m, i),
      ),
    ];
  });
  if (elements.length === 0) return [];
  return [lines.node('mj-social', { mode: 'horizontal', align: align(m.style['text-align']), ...paddingAttributes(m.style) }, elements, m.origin)];
};

/**
 * The image an mj-social-element shows, with its link: the same attributes, in the same order,
 * for the icons of social and of icons (both descriptors name them src, href, target, alt, title).
 */
function iconImage(src: string, node: Record<string, unknown>) {
  return { src, ...linkAttributes(node), alt: text(node.alt), title: str(node.title) };
}

/** Where the i-th icon of either module stands in the document (a finding about it points there). */
function iconOrigin(m: Parameters<ModuleBuilder>[0], i: number) {
  return { uuid: m.origin.uuid, pointer: `${m.origin.pointer}/descriptor/iconsList/icons/${i}` };
}

/** 1 to 4 lengths (`0 5px 5px 0`): what mj-social-element's padding takes. */
function isPaddingShorthand(value: string): boolean {
  const parts = value.split(' ').filter((p) => p !== '');
  return parts.length >= 1 && parts.length <= 4 && parts.every((p) => length(p) !== undefined && /^\d/.test(p));
}
