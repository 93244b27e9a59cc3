/**
 * The value types a field of the design document can take. Each names the JSON types it accepts
 * (what the JSON Schema checks: a wrong JSON type is an error) and says in words what the text
 * looks like (what the renderer expects; a value it cannot read falls back to the field's
 * default, it is never an error). Every field of every node (nodes.ts) and every CSS property
 * (css.ts) has one of these.
 */
export interface Doc {
  es: string;
  en: string;
}

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';

export interface ValueTypeDecl {
  json: readonly JsonType[];
  doc: Doc;
}

export const VALUE_TYPES = {
  string: { json: ['string'], doc: { es: 'texto', en: 'text' } },
  html: {
    json: ['string'],
    doc: {
      es: 'HTML en línea (párrafos, enlaces, negritas...); admite etiquetas de combinación como {{first_name}}',
      en: 'inline HTML (paragraphs, links, bold...); merge tags such as {{first_name}} are allowed',
    },
  },
  url: {
    json: ['string'],
    doc: {
      es: 'enlace: http(s)://, mailto:, tel:, #ancla o una etiqueta de combinación; vacío = sin enlace; javascript: y data: son errores',
      en: 'link: http(s)://, mailto:, tel:, #anchor or a merge tag; empty = no link; javascript: and data: are errors',
    },
  },
  image_url: {
    json: ['string'],
    doc: { es: 'dirección http(s) de una imagen; data: es un error', en: 'http(s) address of an image; data: is an error' },
  },
  boolean: { json: ['boolean'], doc: { es: 'true o false', en: 'true or false' } },
  integer: { json: ['integer'], doc: { es: 'número entero', en: 'whole number' } },
  number: { json: ['number'], doc: { es: 'número', en: 'number' } },
  count: {
    json: ['integer', 'string'],
    doc: { es: 'número entero (también como texto, p. ej. "3")', en: 'whole number (also as text, e.g. "3")' },
  },
  uuid: {
    json: ['string'],
    doc: {
      es: 'identificador del nodo (UUID, p. ej. 0b3c8a4e-...); debería ser único en el documento',
      en: 'node identifier (a UUID, e.g. 0b3c8a4e-...); should be unique in the document',
    },
  },
  enum: { json: ['string'], doc: { es: 'uno de los valores listados', en: 'one of the listed values' } },
  color: {
    json: ['string'],
    doc: {
      es: 'color CSS: #rgb, #rrggbb, rgb()/rgba(), un nombre de color o transparent',
      en: 'CSS colour: #rgb, #rrggbb, rgb()/rgba(), a colour name or transparent',
    },
  },
  length: {
    json: ['string', 'number'],
    doc: { es: 'longitud CSS en px (p. ej. "10px"; 0 sin unidad)', en: 'CSS length in px (e.g. "10px"; 0 without unit)' },
  },
  length_or_percentage: {
    json: ['string', 'number'],
    doc: { es: 'longitud en px, porcentaje (p. ej. "100%") o auto', en: 'length in px, percentage (e.g. "100%") or auto' },
  },
  dimension: {
    json: ['string', 'number'],
    doc: { es: 'número de píxeles o longitud en px', en: 'number of pixels or a length in px' },
  },
  border: {
    json: ['string'],
    doc: { es: 'borde CSS: ancho estilo color (p. ej. "1px solid #BBBBBB")', en: 'CSS border: width style colour (e.g. "1px solid #BBBBBB")' },
  },
  font_family: {
    json: ['string'],
    doc: { es: 'lista de fuentes CSS o inherit (hereda la del cuerpo)', en: 'CSS font stack or inherit (takes the body\'s)' },
  },
  font_weight: {
    json: ['string', 'number'],
    doc: { es: 'grosor: 100-900, normal o bold', en: 'weight: 100-900, normal or bold' },
  },
  line_height: {
    json: ['string', 'number'],
    doc: { es: 'interlineado: porcentaje ("120%"), número o longitud', en: 'line height: percentage ("120%"), number or length' },
  },
  background_image: {
    json: ['string'],
    doc: { es: 'none o url(\'https://...\')', en: 'none or url(\'https://...\')' },
  },
} as const satisfies Record<string, ValueTypeDecl>;

export type ValueType = keyof typeof VALUE_TYPES;
