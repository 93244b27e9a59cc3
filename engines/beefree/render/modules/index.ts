import type { ModuleBuilder } from '../context.js';
import { button } from './button.js';
import { divider } from './divider.js';
import { heading } from './heading.js';
import { html } from './html.js';
import { image } from './image.js';
import { list } from './list.js';
import { menu } from './menu.js';
import { paragraph } from './paragraph.js';
import { icons, social } from './social.js';
import { spacer } from './spacer.js';
import { table } from './table.js';
import { text } from './text.js';
import { video } from './video.js';

/**
 * The builder of each module kind the format declares (format/nodes.ts KINDS). A test checks
 * that every declared kind has one here and that nothing here is undeclared.
 */
export const MODULE_BUILDERS: Readonly<Record<string, ModuleBuilder>> = {
  paragraph,
  heading,
  list,
  text,
  image,
  button,
  divider,
  spacer,
  social,
  icons,
  menu,
  html,
  video,
  table,
};
