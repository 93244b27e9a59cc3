import type { Doc, ValueType } from './value-types.js';

/**
 * Every CSS property the document's style objects may carry, with its value type. A style node
 * (nodes.ts) picks its properties from this table; a property not listed is unknown and has no
 * effect. Names are CSS's, as Beefree writes them (kebab-case).
 */
export interface CssPropertyDecl {
  type: ValueType;
  values?: readonly string[];
  doc?: Doc;
}

const TEXT_ALIGN = ['left', 'center', 'right', 'justify'] as const;

export const CSS_PROPERTIES = {
  'background-color': { type: 'color' },
  'background-image': { type: 'background_image' },
  'background-position': { type: 'string', doc: { es: 'p. ej. "top left"', en: 'e.g. "top left"' } },
  'background-repeat': { type: 'enum', values: ['no-repeat', 'repeat', 'repeat-x', 'repeat-y'] },
  'background-size': { type: 'string', doc: { es: 'auto, cover, contain o longitudes', en: 'auto, cover, contain or lengths' } },
  color: { type: 'color' },
  'link-color': { type: 'color', doc: { es: 'color de los enlaces del texto', en: 'colour of the links in the text' } },
  'font-family': { type: 'font_family' },
  'font-size': { type: 'length' },
  'font-weight': { type: 'font_weight' },
  'line-height': { type: 'line_height' },
  'letter-spacing': { type: 'length' },
  'text-align': { type: 'enum', values: TEXT_ALIGN },
  direction: { type: 'enum', values: ['ltr', 'rtl'] },
  width: { type: 'length_or_percentage' },
  'max-width': { type: 'length_or_percentage' },
  height: { type: 'length' },
  'padding-top': { type: 'length' },
  'padding-right': { type: 'length' },
  'padding-bottom': { type: 'length' },
  'padding-left': { type: 'length' },
  'border-top': { type: 'border' },
  'border-right': { type: 'border' },
  'border-bottom': { type: 'border' },
  'border-left': { type: 'border' },
  'border-radius': { type: 'length' },
} as const satisfies Record<string, CssPropertyDecl>;

export type CssProperty = keyof typeof CSS_PROPERTIES;

/** Property groups several style nodes share. */
export const PADDING = ['padding-top', 'padding-right', 'padding-bottom', 'padding-left'] as const satisfies readonly CssProperty[];
export const BORDERS = ['border-top', 'border-right', 'border-bottom', 'border-left'] as const satisfies readonly CssProperty[];
export const BACKGROUND = [
  'background-color',
  'background-image',
  'background-position',
  'background-repeat',
  'background-size',
] as const satisfies readonly CssProperty[];
export const TYPOGRAPHY = [
  'color',
  'font-family',
  'font-size',
  'font-weight',
  'line-height',
  'letter-spacing',
  'text-align',
  'direction',
] as const satisfies readonly CssProperty[];
