import type { Lines, MjmlNode, Origin } from './mjml-tree.js';
import type { Json } from './values.js';

/** What a module inherits from the body and its row (text colour, fonts, links, direction). */
export interface Inherited {
  /** The body's font stack, with fallbacks. */
  fontFamily: string;
  /** The row's text colour, else the body's. */
  color: string;
  linkColor: string;
  /** The document's direction (from its language). */
  dir: 'ltr' | 'rtl';
}

/** One module, as its builder receives it. */
export interface ModuleInput {
  kind: string;
  /** The content object (descriptor[content key], or an alias older documents use); {} when absent. */
  content: Json;
  /** The descriptor as written (nested computedStyle objects: menu spacing, hamburger...). */
  descriptor: Json;
  /** descriptor.style resolved against the declared defaults (padding, text-align...). */
  style: Record<string, string | number | boolean>;
  /** descriptor.computedStyle resolved against the declared defaults. */
  computed: Record<string, string | number | boolean>;
  origin: Origin;
  /** Pixels available to the module's box on desktop (its column's inner width). */
  columnWidth: number;
  inherited: Inherited;
}

/** Builds one module kind's MJML (none, one or more nodes inside an mj-column). */
export type ModuleBuilder = (m: ModuleInput, lines: Lines) => MjmlNode[];
