import type { FindingLevel, Finding } from '../findings.js';
import { GMAIL_CLIP_BYTES, MAX_CONFIG_BYTES, MAX_HTML_BYTES } from './limits.js';
import type { Doc } from './value-types.js';

/**
 * Every rule the document check applies, with its level, the 422 code of its errors and what
 * triggers it. The checks (check/) emit findings under these names only; the Markdown `format`
 * text and docs/templates.md list them from here.
 */
export interface RuleDecl {
  level: FindingLevel;
  /** Errors only: the errors[] code the API reports them under. */
  code?: NonNullable<Finding['code']>;
  doc: Doc;
}

const kb = (n: number) => `${Math.round(n / 1024)} KB (${n} bytes)`;

export const RULES = {
  invalid_type: {
    level: 'error',
    code: 'invalid_document',
    doc: {
      es: 'Un nodo o campo tiene un tipo JSON equivocado (p. ej. rows no es un array, un descriptor no es un objeto, un texto es un número).',
      en: 'A node or field has the wrong JSON type (e.g. rows is not an array, a descriptor is not an object, a text is a number).',
    },
  },
  missing_field: {
    level: 'error',
    code: 'invalid_document',
    doc: {
      es: 'Falta un campo obligatorio: page, page.rows, columns de una fila, modules de una columna, type o descriptor de un módulo.',
      en: 'A required field is missing: page, page.rows, a row\'s columns, a column\'s modules, a module\'s type or descriptor.',
    },
  },
  module_type_invalid: {
    level: 'error',
    code: 'invalid_document',
    doc: {
      es: 'El type de un módulo no es `mailup-bee-newsletter-modules-<tipo>` con un tipo conocido.',
      en: 'A module\'s type is not `mailup-bee-newsletter-modules-<kind>` with a known kind.',
    },
  },
  unsafe_link: {
    level: 'error',
    code: 'invalid_document',
    doc: {
      es: 'Un enlace o imagen usa javascript:, vbscript: o data: (en un campo de enlace o dentro del HTML de un módulo).',
      en: 'A link or image uses javascript:, vbscript: or data: (in a link field or inside a module\'s HTML).',
    },
  },
  document_too_large: {
    level: 'error',
    code: 'invalid_document',
    doc: { es: `El documento ocupa más de ${kb(MAX_CONFIG_BYTES)} en JSON.`, en: `The document is over ${kb(MAX_CONFIG_BYTES)} as JSON.` },
  },
  module_not_supported: {
    level: 'error',
    code: 'essential_not_supported',
    doc: {
      es: 'Un módulo de Beefree que Cartero no genera (form, carousel, merge-content, addon); params.kinds los nombra.',
      en: 'A Beefree module Cartero does not render (form, carousel, merge-content, addon); params.kinds names them.',
    },
  },
  html_too_large: {
    level: 'error',
    code: 'template_html_too_large',
    doc: { es: `El HTML generado supera ${kb(MAX_HTML_BYTES)}.`, en: `The generated HTML is over ${kb(MAX_HTML_BYTES)}.` },
  },
  html_estimate_too_large: {
    level: 'error',
    code: 'template_html_too_large',
    doc: {
      es: `El HTML generado superaría ${kb(MAX_HTML_BYTES)} con solo sus filas, columnas y módulos (su mínimo en bytes); se rechaza sin generarlo. params: estimated_min_bytes, max_bytes, rows, columns, modules.`,
      en: `The generated HTML would be over ${kb(MAX_HTML_BYTES)} from its rows, columns and modules alone (their fewest bytes); refused without rendering. params: estimated_min_bytes, max_bytes, rows, columns, modules.`,
    },
  },
  render_timeout: {
    level: 'error',
    code: 'template_render_timeout',
    doc: {
      es: 'Generar el HTML del documento superó el tiempo máximo (TEMPLATE_RENDER_TIMEOUT_MS); params.timeout_ms lo da. Simplifique el documento.',
      en: 'Rendering the document took longer than the maximum (TEMPLATE_RENDER_TIMEOUT_MS); params.timeout_ms gives it. Simplify the document.',
    },
  },
  image_missing_alt: {
    level: 'warning',
    doc: { es: 'Imagen (o icono social) sin texto alternativo.', en: 'Image (or social icon) without alternative text.' },
  },
  link_missing: {
    level: 'warning',
    doc: { es: 'Botón, icono social o elemento de menú sin enlace.', en: 'Button, social icon or menu item without a link.' },
  },
  duplicate_uuid: {
    level: 'warning',
    doc: {
      es: 'Dos nodos comparten uuid (los editores reales lo producen; se acepta).',
      en: 'Two nodes share a uuid (real editors produce this; it is accepted).',
    },
  },
  grid_columns_sum: {
    level: 'warning',
    doc: {
      es: 'Las partes grid-columns de una fila no suman 12; se reparten en proporción.',
      en: 'The grid-columns shares of a row do not add up to 12; they are applied proportionally.',
    },
  },
  grid_columns_missing: {
    level: 'warning',
    doc: {
      es: 'Una columna no tiene grid-columns; toma una parte igual de lo que dejan las demás.',
      en: 'A column has no grid-columns; it takes an equal part of what the others leave.',
    },
  },
  module_content_missing: {
    level: 'warning',
    doc: {
      es: 'Un módulo no tiene su clave de contenido (p. ej. un image sin descriptor.image); no muestra nada.',
      en: 'A module lacks its content key (e.g. an image without descriptor.image); it shows nothing.',
    },
  },
  low_contrast: {
    level: 'warning',
    doc: {
      es: 'El color del texto contra el fondo más cercano (módulo, columna, fila, mensaje) no llega a WCAG AA (4.5:1; 3:1 en texto grande).',
      en: 'Text colour against the nearest background (module, column, row, message) is under WCAG AA (4.5:1; 3:1 for large text).',
    },
  },
  html_gmail_clipping: {
    level: 'warning',
    doc: {
      es: `El HTML generado supera ${kb(GMAIL_CLIP_BYTES)}: Gmail lo recorta.`,
      en: `The generated HTML is over ${kb(GMAIL_CLIP_BYTES)}: Gmail clips it.`,
    },
  },
  html_module_script: {
    level: 'warning',
    doc: {
      es: 'Un módulo html tiene <script> o atributos on*; se eliminan del HTML.',
      en: 'An html module has <script> or on* attributes; they are removed from the HTML.',
    },
  },
  css_vendor_prefix: {
    level: 'warning',
    doc: {
      es: 'Un valor CSS con prefijo de fabricante (p. ej. -webkit-center); se normaliza (center).',
      en: 'A vendor-prefixed CSS value (e.g. -webkit-center); it is normalised (center).',
    },
  },
  check_failed: {
    level: 'warning',
    doc: {
      es: 'Una comprobación opcional (params.check la nombra) no pudo ejecutarse sobre este documento y se omitió; sus sugerencias o avisos faltan.',
      en: 'An optional check (params.check names it) could not run on this document and was skipped; its suggestions or warnings are missing.',
    },
  },
  mjml_validation: {
    level: 'warning',
    doc: {
      es: 'El generador de HTML (MJML) señaló un valor que no pudo usar tal cual, en ese nodo (lo emite el renderizador).',
      en: 'The HTML generator (MJML) flagged a value it could not use as is, at that node (emitted by the renderer).',
    },
  },
  subject_missing: {
    level: 'suggestion',
    doc: { es: 'La plantilla no tiene asunto (campo subject).', en: 'The template has no subject (subject field).' },
  },
  preheader_missing: {
    level: 'suggestion',
    doc: { es: 'La plantilla no tiene preheader (campo preheader).', en: 'The template has no preheader (preheader field).' },
  },
  link_without_scheme: {
    level: 'suggestion',
    doc: {
      es: 'Un enlace sin esquema (www.ejemplo.com): añada https://.',
      en: 'A link without a scheme (www.example.com): add https://.',
    },
  },
  css_client_support: {
    level: 'suggestion',
    doc: {
      es: 'El HTML generado usa CSS que algún cliente principal (Gmail, Outlook, Apple Mail, Yahoo) no admite (datos de Can I email).',
      en: 'The generated HTML uses CSS some main client (Gmail, Outlook, Apple Mail, Yahoo) does not support (Can I email data).',
    },
  },
  image_missing_width: {
    level: 'suggestion',
    doc: {
      es: 'Imagen sin ancho explícito (image.width o computedStyle.width): Outlook puede mostrarla a su tamaño real.',
      en: 'Image without an explicit width (image.width or computedStyle.width): Outlook may show it at its natural size.',
    },
  },
} as const satisfies Record<string, RuleDecl>;

export type RuleName = keyof typeof RULES;
