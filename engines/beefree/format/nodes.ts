import { BACKGROUND, BORDERS, CSS_PROPERTIES, PADDING, TYPOGRAPHY, type CssProperty } from './css.js';
import type { Doc, ValueType } from './value-types.js';

/**
 * THE declaration of the design document (the Beefree JSON document): every node type, its
 * fields, their value types and defaults, and every module kind with its content key. Everything
 * else is derived from here: the JSON Schema (schema.ts), `field_types`, `defaults` and the
 * skeleton (derive.ts), the Markdown `format` text (markdown.ts), the module detail, the
 * checks that look for links, HTML and alt texts (check/), and the renderer's defaults
 * (engines/beefree/render reads `resolveNode`/`KINDS` from this file).
 *
 * Field names are exactly the ones real Beefree documents use (`grid-columns`,
 * `rowColStackOnMobile`, `iconsList`, `menuItemsList`...). A key not declared here is unknown:
 * it is accepted, stored and ignored (real documents carry `comments`, `translations`,
 * `metadata`, `mobileStyle`, `hoverStyle`...).
 *
 * `default` is the value the renderer uses when the field is absent (or null), and the starting
 * value of a new node in `defaults`. A field without default inherits (a text colour takes the
 * row's, then the body's) or means "nothing" (no link, no width).
 */

export const PREFIX = 'mailup-bee-newsletter';
export const MODULE_TYPE_PREFIX = `${PREFIX}-modules-`;

interface FieldBase {
  /** Absent (or null) is an error. */
  required?: boolean;
  doc?: Doc;
  /** Editor state kept in the document; it has no effect on the HTML. */
  editor?: boolean;
  /** What the checks expect of the value: a link (button, social, menu), an alt text. */
  expect?: 'link' | 'alt';
}

export interface ValueField extends FieldBase {
  is: 'value';
  type: ValueType;
  values?: readonly string[];
  default?: string | number | boolean;
  /** Other names older documents use for this field (read when the field itself is absent). */
  aliases?: readonly string[];
}

export interface ObjectField extends FieldBase {
  is: 'object';
  /** The node type of the value (a key of NODES, or of the kind's nodes inside a descriptor). */
  node: string;
}

export interface ArrayField extends FieldBase {
  is: 'array';
  /** The node type of each item. */
  items: string;
}

/** module.descriptor: its node type depends on the module's kind (KINDS[kind].nodes.descriptor). */
export interface DescriptorField extends FieldBase {
  is: 'descriptor';
}

export type FieldDecl = ValueField | ObjectField | ArrayField | DescriptorField;

export interface NodeDecl {
  doc: Doc;
  fields: Record<string, FieldDecl>;
  /** A style node: its fields are CSS properties (css.ts). */
  css?: boolean;
}

// ---- builders (keep the tables below readable) ----

type Opts = Omit<ValueField, 'is' | 'type'>;
const val = (type: ValueType, o: Opts = {}): ValueField => ({ is: 'value', type, ...o });
const enm = (values: readonly string[], o: Omit<Opts, 'values'> = {}): ValueField => ({ is: 'value', type: 'enum', values, ...o });
const obj = (node: string, o: FieldBase = {}): ObjectField => ({ is: 'object', node, ...o });
const arr = (items: string, o: FieldBase = {}): ArrayField => ({ is: 'array', items, ...o });
const d = (es: string, en: string): Doc => ({ es, en });
const uuid = (): ValueField => val('uuid', { doc: d('identificador único del nodo', 'unique identifier of the node') });
const hide = (where: Doc): ValueField => val('boolean', { default: false, doc: where });

function style(doc: Doc, props: readonly CssProperty[], defaults: Partial<Record<CssProperty, string>> = {}): NodeDecl {
  const fields: Record<string, FieldDecl> = {};
  for (const p of props) {
    const c = CSS_PROPERTIES[p] as { type: ValueType; values?: readonly string[]; doc?: Doc };
    fields[p] = { is: 'value', type: c.type, ...(c.values ? { values: c.values } : {}), ...(defaults[p] !== undefined ? { default: defaults[p] } : {}) };
  }
  return { doc, fields, css: true };
}

const pad = (v: string): Partial<Record<CssProperty, string>> => ({ 'padding-top': v, 'padding-right': v, 'padding-bottom': v, 'padding-left': v });

// ---- the document's structural nodes ----

export const NODES: Record<string, NodeDecl> = {
  document: {
    doc: d('El documento: un objeto con `page`.', 'The document: an object with `page`.'),
    fields: { page: obj('page', { required: true }) },
  },
  page: {
    doc: d('La página: título, cabecera, propiedades del cuerpo y filas.', 'The page: title, head, body properties and rows.'),
    fields: {
      title: val('string', { default: '', editor: true, doc: d('título interno del diseño (el <title> del HTML es el asunto)', 'internal title of the design (the HTML <title> is the subject)') }),
      description: val('string', { default: '', editor: true }),
      template: obj('page.template'),
      head: obj('page.head'),
      body: obj('page.body'),
      rows: arr('row', { required: true, doc: d('filas, de arriba abajo', 'rows, top to bottom') }),
    },
  },
  'page.template': {
    doc: d('Versión del formato Beefree.', 'Beefree format version.'),
    fields: {
      name: val('string', { default: 'template-base', editor: true }),
      type: val('string', { default: 'basic', editor: true }),
      version: val('string', { default: '2.0.0', editor: true }),
    },
  },
  'page.head': {
    doc: d('Cabecera del documento.', 'Document head.'),
    fields: { meta: obj('page.head.meta') },
  },
  'page.head.meta': {
    doc: d(
      'Metadatos que guarda el editor. El asunto y el preheader que se envían son los campos `subject` y `preheader` de la plantilla, no estos.',
      'Metadata the editor keeps. The subject and preheader that are sent are the template\'s `subject` and `preheader` fields, not these.',
    ),
    fields: {
      subject: val('string', { editor: true }),
      preheader: val('string', { editor: true }),
      title: val('string', { doc: d('título de la página HTML si la plantilla no tiene asunto', 'HTML page title when the template has no subject') }),
      lang: val('string', { doc: d('idioma del HTML (atributo lang), p. ej. "es"', 'language of the HTML (lang attribute), e.g. "en"') }),
      description: val('string', { editor: true }),
    },
  },
  'page.body': {
    doc: d('Propiedades generales del mensaje.', 'General properties of the message.'),
    fields: {
      type: val('string', { default: 'mailup-bee-page-properties', editor: true }),
      webFonts: arr('page.body.webFonts[]', { doc: d('fuentes web usadas (con alternativas en font-family)', 'web fonts used (with fallbacks in font-family)') }),
      container: obj('page.body.container'),
      content: obj('page.body.content'),
    },
  },
  'page.body.webFonts[]': {
    doc: d('Una fuente web.', 'A web font.'),
    fields: {
      name: val('string'),
      fontFamily: val('font_family'),
      url: val('url', { doc: d('hoja de estilos de la fuente (https)', 'the font\'s stylesheet (https)') }),
    },
  },
  'page.body.container': {
    doc: d('Fondo exterior (toda la ventana).', 'Outer background (the whole viewport).'),
    fields: { style: obj('page.body.container.style') },
  },
  'page.body.container.style': style(d('Estilo del fondo exterior.', 'Style of the outer background.'), BACKGROUND, { 'background-color': '#FFFFFF' }),
  'page.body.content': {
    doc: d('Área del mensaje.', 'Message area.'),
    fields: { style: obj('page.body.content.style'), computedStyle: obj('page.body.content.computedStyle') },
  },
  'page.body.content.style': style(d('Texto por defecto del mensaje.', 'Default text of the message.'), ['color', 'font-family'], {
    color: '#000000',
    'font-family': 'Arial, Helvetica, sans-serif',
  }),
  'page.body.content.computedStyle': {
    doc: d('Medidas y colores del área del mensaje.', 'Size and colours of the message area.'),
    fields: {
      messageWidth: val('length', { default: '600px', doc: d('ancho del mensaje en escritorio', 'message width on desktop') }),
      messageBackgroundColor: val('color', { default: 'transparent', doc: d('fondo del área del mensaje', 'background of the message area') }),
      linkColor: val('color', { default: '#0068A5', doc: d('color de enlaces por defecto', 'default link colour') }),
      align: enm(['center', 'left'], { default: 'center', doc: d('posición del mensaje en la ventana', 'position of the message in the viewport') }),
    },
  },
  row: {
    doc: d(
      'Una fila: una banda horizontal con columnas. Las columnas se apilan en pantallas estrechas salvo que la fila diga lo contrario.',
      'A row: a horizontal band of columns. Columns stack on narrow screens unless the row says otherwise.',
    ),
    fields: {
      uuid: uuid(),
      type: val('string', { default: '', editor: true, doc: d('nombre de la disposición (informativo: el ancho sale de las columnas)', 'layout name (informational: widths come from the columns)') }),
      locked: val('boolean', { default: false, editor: true }),
      synced: val('boolean', { default: false, editor: true }),
      empty: val('boolean', { default: false, editor: true }),
      container: obj('row.container'),
      content: obj('row.content'),
      columns: arr('column', { required: true }),
    },
  },
  'row.container': {
    doc: d('Banda a todo el ancho detrás de la fila.', 'Full-width band behind the row.'),
    fields: { style: obj('row.container.style') },
  },
  'row.container.style': style(d('Fondo de la banda.', 'Background of the band.'), BACKGROUND, { 'background-color': 'transparent' }),
  'row.content': {
    doc: d('El contenido de la fila (ancho del mensaje).', 'The row\'s content (message width).'),
    fields: { style: obj('row.content.style'), computedStyle: obj('row.content.computedStyle') },
  },
  'row.content.style': style(
    d('Fondo, color de texto, relleno y bordes del contenido de la fila.', 'Background, text colour, padding and borders of the row\'s content.'),
    [...BACKGROUND, 'color', 'width', ...PADDING, ...BORDERS, 'border-radius'],
    { 'background-color': 'transparent' },
  ),
  'row.content.computedStyle': {
    doc: d('Comportamiento de la fila.', 'Behaviour of the row.'),
    fields: {
      rowColStackOnMobile: val('boolean', { default: true, doc: d('apilar las columnas en pantallas estrechas', 'stack the columns on narrow screens') }),
      rowReverseColStackOnMobile: val('boolean', { default: false, doc: d('apilarlas en orden inverso', 'stack them in reverse order') }),
      verticalAlign: enm(['top', 'middle', 'bottom'], { default: 'top' }),
      hideContentOnMobile: hide(d('ocultar en móvil', 'hide on mobile')),
      hideContentOnDesktop: hide(d('ocultar en escritorio', 'hide on desktop')),
    },
  },
  column: {
    doc: d(
      'Una columna. `grid-columns` es su parte de una rejilla de 12: las de una fila suman 12 (si no, se reparten en proporción).',
      'A column. `grid-columns` is its share of a 12-unit grid: the shares of a row add up to 12 (otherwise they are applied proportionally).',
    ),
    fields: {
      uuid: uuid(),
      'grid-columns': val('integer', { default: 12, doc: d('parte de 12 (1-12)', 'share of 12 (1-12)') }),
      style: obj('column.style'),
      modules: arr('module', { required: true }),
    },
  },
  'column.style': style(d('Fondo, relleno y bordes de la columna.', 'Background, padding and borders of the column.'), ['background-color', ...PADDING, ...BORDERS, 'border-radius'], {
    'background-color': 'transparent',
    'padding-top': '5px',
    'padding-right': '0px',
    'padding-bottom': '5px',
    'padding-left': '0px',
  }),
  module: {
    doc: d(
      'Un módulo (bloque de contenido). `type` es `mailup-bee-newsletter-modules-<tipo>`; `descriptor` guarda el contenido bajo su clave de contenido.',
      'A module (content block). `type` is `mailup-bee-newsletter-modules-<kind>`; `descriptor` holds the content under its content key.',
    ),
    fields: {
      uuid: uuid(),
      type: val('string', { required: true, doc: d('`mailup-bee-newsletter-modules-<tipo>`', '`mailup-bee-newsletter-modules-<kind>`') }),
      locked: val('boolean', { default: false, editor: true }),
      descriptor: { is: 'descriptor', required: true, doc: d('depende del tipo (ver módulos)', 'depends on the kind (see modules)') },
    },
  },
};

// ---- module kinds ----

export interface KindDecl {
  kind: string;
  /** The descriptor key that holds the content. */
  content_key: string;
  /** Other descriptor keys older documents put the content under (read when content_key is absent). */
  content_aliases?: readonly string[];
  doc: Doc;
  /** The descriptor's node types: `descriptor` is the root; the others are reached from it. */
  nodes: Record<string, NodeDecl>;
  /** Content for the example module (merged over the defaults). */
  example: Record<string, unknown>;
}

const TARGET = ['_blank', '_self', '_top'] as const;

/** What every descriptor has: the block's outer style and its visibility. */
function descriptor(
  contentKey: string,
  o: {
    style?: readonly CssProperty[];
    styleDefaults?: Partial<Record<CssProperty, string>>;
    computed?: Record<string, FieldDecl>;
  } = {},
): Record<string, NodeDecl> {
  return {
    descriptor: {
      doc: d('El descriptor del módulo.', 'The module\'s descriptor.'),
      fields: {
        [contentKey]: obj(contentKey, { doc: d('el contenido', 'the content') }),
        style: obj('descriptor.style'),
        computedStyle: obj('descriptor.computedStyle'),
        id: val('string', { doc: d('atributo id del bloque en el HTML', 'id attribute of the block in the HTML') }),
      },
    },
    'descriptor.style': style(
      d('Estilo del bloque que rodea el contenido (relleno, alineación).', 'Style of the block around the content (padding, alignment).'),
      o.style ?? PADDING,
      o.styleDefaults ?? pad('10px'),
    ),
    'descriptor.computedStyle': {
      doc: d('Visibilidad y medidas calculadas por el editor.', 'Visibility and sizes computed by the editor.'),
      fields: {
        hideContentOnMobile: hide(d('ocultar en móvil', 'hide on mobile')),
        hideContentOnDesktop: hide(d('ocultar en escritorio', 'hide on desktop')),
        hideContentOnHtml: hide(d('omitir en el HTML', 'leave out of the HTML')),
        hideContentOnAmp: val('boolean', { default: false, editor: true }),
        ...(o.computed ?? {}),
      },
    },
  };
}

const textStyle = (extra: readonly CssProperty[] = [], defaults: Partial<Record<CssProperty, string>> = {}): NodeDecl =>
  style(d('Tipografía del texto.', 'Typography of the text.'), [...TYPOGRAPHY, ...extra], {
    'font-family': 'inherit',
    'font-size': '14px',
    'font-weight': '400',
    'line-height': '120%',
    'letter-spacing': '0px',
    'text-align': 'left',
    direction: 'ltr',
    ...defaults,
  });

const linkColor = (): ValueField => val('color', { doc: d('color de los enlaces (si falta, el del cuerpo)', 'link colour (when absent, the body\'s)') });

export const KINDS: Record<string, KindDecl> = {
  paragraph: {
    kind: 'paragraph',
    content_key: 'paragraph',
    content_aliases: ['text'],
    doc: d('Párrafo de texto enriquecido.', 'Rich text paragraph.'),
    nodes: {
      ...descriptor('paragraph'),
      paragraph: {
        doc: d('El párrafo.', 'The paragraph.'),
        fields: {
          html: val('html', { default: '', aliases: ['text'], doc: d('el texto, en HTML (<p>...)', 'the text, in HTML (<p>...)') }),
          style: obj('paragraph.style'),
          computedStyle: obj('paragraph.computedStyle'),
        },
      },
      'paragraph.style': textStyle(),
      'paragraph.computedStyle': {
        doc: d('Enlaces y espaciado.', 'Links and spacing.'),
        fields: { linkColor: linkColor(), paragraphSpacing: val('length', { default: '16px', doc: d('espacio entre párrafos', 'space between paragraphs') }) },
      },
    },
    example: { paragraph: { html: '<p>Hola {{first_name}}, <a href="https://example.com">mira las novedades</a>.</p>' } },
  },
  heading: {
    kind: 'heading',
    content_key: 'heading',
    doc: d('Título (h1, h2, h3...).', 'Heading (h1, h2, h3...).'),
    nodes: {
      ...descriptor('heading', { style: [...PADDING, 'text-align', 'width'], styleDefaults: { ...pad('0px'), 'text-align': 'center', width: '100%' } }),
      heading: {
        doc: d('El título.', 'The heading.'),
        fields: {
          title: enm(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'], { default: 'h1', doc: d('nivel del título', 'heading level') }),
          text: val('html', { default: '', doc: d('el texto, HTML en línea', 'the text, inline HTML') }),
          style: obj('heading.style'),
        },
      },
      'heading.style': textStyle(['link-color'], { 'font-size': '23px', 'font-weight': '700', 'text-align': 'center' }),
    },
    example: { heading: { title: 'h1', text: 'Novedades de {{month}}' } },
  },
  list: {
    kind: 'list',
    content_key: 'list',
    doc: d('Lista con viñetas o numerada.', 'Bulleted or numbered list.'),
    nodes: {
      ...descriptor('list'),
      list: {
        doc: d('La lista.', 'The list.'),
        fields: {
          html: val('html', { default: '', doc: d('la lista en HTML (<ul>/<ol> con <li>)', 'the list in HTML (<ul>/<ol> with <li>)') }),
          tag: enm(['ul', 'ol'], { default: 'ul' }),
          style: obj('list.style'),
          computedStyle: obj('list.computedStyle'),
        },
      },
      'list.style': textStyle(),
      'list.computedStyle': {
        doc: d('Sangría, espaciado y viñetas.', 'Indent, spacing and bullets.'),
        fields: {
          liIndent: val('length', { default: '20px' }),
          liSpacing: val('length', { default: '0px' }),
          linkColor: linkColor(),
          listStylePosition: enm(['inside', 'outside'], { default: 'outside' }),
          listStyleType: val('string', { default: 'disc', doc: d('disc, circle, square, decimal, lower-alpha...', 'disc, circle, square, decimal, lower-alpha...') }),
          startList: val('count', { editor: true }),
          startListFrom: val('count', { doc: d('primer número de una lista numerada', 'first number of a numbered list') }),
        },
      },
    },
    example: { list: { tag: 'ul', html: '<ul><li>Uno</li><li>Dos</li></ul>' } },
  },
  text: {
    kind: 'text',
    content_key: 'text',
    doc: d('Texto (módulo antiguo, anterior a paragraph).', 'Text (legacy module, before paragraph).'),
    nodes: {
      ...descriptor('text'),
      text: {
        doc: d('El texto.', 'The text.'),
        fields: {
          html: val('html', { default: '', doc: d('el texto en HTML', 'the text in HTML') }),
          style: obj('text.style'),
          computedStyle: obj('text.computedStyle'),
        },
      },
      'text.style': style(d('Tipografía del texto.', 'Typography of the text.'), TYPOGRAPHY, { 'font-family': 'inherit', 'line-height': '120%' }),
      'text.computedStyle': { doc: d('Enlaces.', 'Links.'), fields: { linkColor: linkColor() } },
    },
    example: { text: { html: '<p>Texto de ejemplo.</p>' } },
  },
  image: {
    kind: 'image',
    content_key: 'image',
    doc: d('Imagen, opcionalmente con enlace.', 'Image, optionally linked.'),
    nodes: {
      ...descriptor('image', {
        style: [...PADDING, 'text-align', 'width', 'border-radius'],
        styleDefaults: { ...pad('0px'), 'text-align': 'center', width: '100%', 'border-radius': '0px' },
        computed: {
          class: val('string', { editor: true, doc: d('"center autowidth" o "center fixedwidth"', '"center autowidth" or "center fixedwidth"') }),
          width: val('dimension', { doc: d('ancho mostrado', 'displayed width') }),
          height: val('dimension', { editor: true }),
        },
      }),
      image: {
        doc: d('La imagen.', 'The image.'),
        fields: {
          src: val('image_url', { default: '', doc: d('dirección de la imagen', 'address of the image') }),
          alt: val('string', { default: '', expect: 'alt', doc: d('texto alternativo (accesibilidad)', 'alternative text (accessibility)') }),
          href: val('url', { default: '', doc: d('enlace al pulsar la imagen', 'link when the image is clicked') }),
          target: enm(TARGET, { default: '_blank' }),
          title: val('string'),
          width: val('length', { doc: d('ancho explícito ("300px")', 'explicit width ("300px")') }),
          height: val('length'),
          prefix: val('string', { editor: true }),
          percWidth: val('number', { editor: true }),
        },
      },
    },
    example: { image: { src: 'https://example.com/banner.png', alt: 'Banner de la campaña', href: 'https://example.com', width: '600px' } },
  },
  button: {
    kind: 'button',
    content_key: 'button',
    doc: d('Botón con enlace (a prueba de clientes de correo).', 'Linked button (bulletproof across mail clients).'),
    nodes: {
      ...descriptor('button', {
        style: [...PADDING, 'text-align'],
        styleDefaults: { ...pad('10px'), 'text-align': 'center' },
        computed: { width: val('dimension', { editor: true }), height: val('dimension', { editor: true }) },
      }),
      button: {
        doc: d('El botón.', 'The button.'),
        fields: {
          label: val('html', { default: '', doc: d('texto del botón (HTML en línea)', 'button text (inline HTML)') }),
          href: val('url', { default: '', expect: 'link', doc: d('destino del botón', 'where the button leads') }),
          target: enm(TARGET, { default: '_blank' }),
          title: val('string'),
          style: obj('button.style'),
        },
      },
      'button.style': style(
        d('Aspecto del botón; el relleno es el interior.', 'Look of the button; padding is the inner one.'),
        ['background-color', 'color', 'font-family', 'font-size', 'font-weight', 'line-height', 'letter-spacing', 'direction', 'width', 'max-width', ...PADDING, ...BORDERS, 'border-radius'],
        {
          'background-color': '#0068A5',
          color: '#FFFFFF',
          'font-family': 'inherit',
          'font-size': '16px',
          'font-weight': '400',
          'line-height': '200%',
          'letter-spacing': '0px',
          direction: 'ltr',
          width: 'auto',
          'max-width': '100%',
          'padding-top': '5px',
          'padding-right': '20px',
          'padding-bottom': '5px',
          'padding-left': '20px',
          'border-top': '0px solid transparent',
          'border-right': '0px solid transparent',
          'border-bottom': '0px solid transparent',
          'border-left': '0px solid transparent',
          'border-radius': '4px',
        },
      ),
    },
    example: { button: { label: 'Comprar ahora', href: 'https://example.com/tienda' } },
  },
  divider: {
    kind: 'divider',
    content_key: 'divider',
    doc: d('Línea divisoria.', 'Divider line.'),
    nodes: {
      ...descriptor('divider', { computed: { align: enm(['left', 'center', 'right'], { default: 'center' }) } }),
      divider: { doc: d('La línea.', 'The line.'), fields: { style: obj('divider.style') } },
      'divider.style': style(d('Trazo y ancho de la línea.', 'Stroke and width of the line.'), ['border-top', 'width', 'height'], {
        'border-top': '1px solid #BBBBBB',
        width: '100%',
      }),
    },
    example: {},
  },
  spacer: {
    kind: 'spacer',
    content_key: 'spacer',
    doc: d('Espacio vertical.', 'Vertical space.'),
    nodes: {
      ...descriptor('spacer', { style: [], styleDefaults: {} }),
      spacer: { doc: d('El espacio.', 'The space.'), fields: { style: obj('spacer.style') } },
      'spacer.style': style(d('Alto y fondo.', 'Height and background.'), ['height', 'background-color'], { height: '60px' }),
    },
    example: { spacer: { style: { height: '30px' } } },
  },
  social: {
    kind: 'social',
    content_key: 'iconsList',
    doc: d('Iconos de redes sociales con enlace.', 'Linked social network icons.'),
    nodes: {
      ...descriptor('iconsList', {
        style: [...PADDING, 'text-align'],
        styleDefaults: { ...pad('10px'), 'text-align': 'center' },
        computed: {
          iconsDefaultWidth: val('dimension', { default: 32, doc: d('ancho de los iconos en px', 'icon width in px') }),
          padding: val('string', { default: '0 2.5px 0 2.5px', doc: d('espacio alrededor de cada icono (CSS padding)', 'space around each icon (CSS padding)') }),
          width: val('dimension', { editor: true }),
          height: val('dimension', { editor: true }),
        },
      }),
      iconsList: { doc: d('Los iconos.', 'The icons.'), fields: { icons: arr('iconsList.icons[]') } },
      'iconsList.icons[]': {
        doc: d('Un icono de red social.', 'A social network icon.'),
        fields: {
          type: val('string', { default: 'follow', editor: true }),
          name: val('string', { default: '', doc: d('red (facebook, instagram...)', 'network (facebook, instagram...)') }),
          text: val('string', { default: '' }),
          image: obj('iconsList.icons[].image'),
          id: val('string', { editor: true }),
        },
      },
      'iconsList.icons[].image': {
        doc: d('La imagen y el enlace del icono.', 'The icon\'s image and link.'),
        fields: {
          src: val('image_url', { default: '' }),
          href: val('url', { default: '', expect: 'link' }),
          alt: val('string', { default: '', expect: 'alt' }),
          title: val('string', { default: '' }),
          prefix: val('string', { editor: true }),
          target: enm(TARGET, { default: '_blank' }),
        },
      },
    },
    example: {
      iconsList: {
        icons: [
          { type: 'follow', name: 'facebook', text: '', image: { src: 'https://example.com/icons/facebook.png', href: 'https://www.facebook.com/example', alt: 'Facebook', title: 'Facebook' } },
        ],
      },
    },
  },
  icons: {
    kind: 'icons',
    content_key: 'iconsList',
    doc: d('Fila de iconos con texto (p. ej. ventajas).', 'Row of icons with text (e.g. features).'),
    nodes: {
      ...descriptor('iconsList', {
        style: [...PADDING, 'text-align', 'color', 'font-family', 'font-size', 'font-weight', 'letter-spacing'],
        styleDefaults: { ...pad('0px'), 'text-align': 'center', 'font-family': 'inherit', 'font-size': '14px', 'font-weight': '400' },
        computed: {
          iconHeight: val('length', { default: '32px' }),
          itemsSpacing: val('length', { default: '0px' }),
          iconSpacing: obj('descriptor.computedStyle.iconSpacing'),
        },
      }),
      'descriptor.computedStyle.iconSpacing': style(d('Relleno alrededor de cada icono.', 'Padding around each icon.'), PADDING, pad('5px')),
      iconsList: { doc: d('Los iconos.', 'The icons.'), fields: { icons: arr('iconsList.icons[]') } },
      'iconsList.icons[]': {
        doc: d('Un icono.', 'An icon.'),
        fields: {
          image: val('image_url', { default: '', doc: d('dirección de la imagen del icono', 'address of the icon image') }),
          href: val('url', { default: '' }),
          text: val('string', { default: '' }),
          textPosition: enm(['right', 'left', 'top', 'bottom'], { default: 'right' }),
          width: val('dimension'),
          height: val('dimension'),
          alt: val('string', { default: '' }),
          title: val('string'),
          target: enm(TARGET, { default: '_blank' }),
          id: val('string', { editor: true }),
        },
      },
    },
    example: { iconsList: { icons: [{ image: 'https://example.com/icons/truck.png', text: 'Envío gratis', alt: '', href: '' }] } },
  },
  menu: {
    kind: 'menu',
    content_key: 'menuItemsList',
    doc: d('Menú de enlaces.', 'Menu of links.'),
    nodes: {
      ...descriptor('menuItemsList', {
        style: [...PADDING, 'text-align', 'color', 'font-family', 'font-size', 'font-weight', 'letter-spacing'],
        styleDefaults: { ...pad('10px'), 'text-align': 'center', color: '#101112', 'font-family': 'inherit', 'font-size': '16px' },
        computed: {
          layout: enm(['horizontal', 'vertical'], { default: 'horizontal' }),
          linkColor: linkColor(),
          separator: val('string', { default: '', doc: d('texto entre elementos (p. ej. "|")', 'text between items (e.g. "|")') }),
          menuItemsSpacing: obj('descriptor.computedStyle.menuItemsSpacing'),
          hamburger: obj('descriptor.computedStyle.hamburger'),
        },
      }),
      'descriptor.computedStyle.menuItemsSpacing': style(d('Relleno de cada elemento.', 'Padding of each item.'), PADDING, pad('5px')),
      'descriptor.computedStyle.hamburger': {
        doc: d('Menú plegado en móvil.', 'Collapsed menu on mobile.'),
        fields: {
          mobile: val('boolean', { default: false }),
          iconType: val('string', { editor: true }),
          iconSize: val('length', { default: '36px' }),
          foregroundColor: val('color', { default: '#000000' }),
          backgroundColor: val('color', { default: 'transparent' }),
        },
      },
      menuItemsList: { doc: d('Los elementos.', 'The items.'), fields: { items: arr('menuItemsList.items[]') } },
      'menuItemsList.items[]': {
        doc: d('Un elemento del menú.', 'A menu item.'),
        fields: { text: val('string', { default: '' }), link: obj('menuItemsList.items[].link') },
      },
      'menuItemsList.items[].link': {
        doc: d('Destino del elemento.', 'Where the item leads.'),
        fields: { href: val('url', { default: '', expect: 'link' }), target: enm(TARGET, { default: '_blank' }), title: val('string', { default: '' }) },
      },
    },
    example: { menuItemsList: { items: [{ text: 'Tienda', link: { href: 'https://example.com/tienda', title: 'Tienda' } }] } },
  },
  html: {
    kind: 'html',
    content_key: 'html',
    doc: d(
      'HTML propio, insertado tal cual (sin <script> ni atributos on*: se eliminan).',
      'Custom HTML, inserted as is (without <script> or on* attributes: they are removed).',
    ),
    nodes: {
      ...descriptor('html', { styleDefaults: pad('0px') }),
      html: { doc: d('El HTML.', 'The HTML.'), fields: { html: val('html', { default: '' }) } },
    },
    example: { html: { html: '<div style="text-align:center">Contenido propio</div>' } },
  },
  video: {
    kind: 'video',
    content_key: 'video',
    doc: d('Vídeo: una miniatura enlazada al vídeo.', 'Video: a thumbnail linked to the video.'),
    nodes: {
      ...descriptor('video'),
      video: {
        doc: d('El vídeo.', 'The video.'),
        fields: {
          src: val('url', { default: '', doc: d('dirección del vídeo (YouTube, Vimeo...)', 'address of the video (YouTube, Vimeo...)') }),
          thumbSrc: val('image_url', { default: '', doc: d('imagen de la miniatura', 'thumbnail image') }),
          mode: enm(['thumbnail', 'embedded', 'custom'], { default: 'thumbnail', doc: d('en correo siempre se muestra la miniatura', 'mail always shows the thumbnail') }),
          thumbRatio: val('string', { default: '16-9' }),
          iconType: val('string', { editor: true }),
          iconColor1: val('color', { editor: true }),
          iconColor2: val('color', { editor: true }),
          iconSize: val('string', { editor: true }),
          iconSrc: val('image_url', { editor: true }),
          alt: val('string', { default: '' }),
        },
      },
    },
    example: { video: { src: 'https://www.youtube.com/watch?v=example', thumbSrc: 'https://example.com/video-thumb.png', alt: 'Ver el vídeo' } },
  },
  table: {
    kind: 'table',
    content_key: 'table',
    doc: d('Tabla de datos con cabecera.', 'Data table with a header.'),
    nodes: {
      ...descriptor('table'),
      table: {
        doc: d('La tabla.', 'The table.'),
        fields: { content: obj('table.content'), style: obj('table.style'), computedStyle: obj('table.computedStyle') },
      },
      'table.content': {
        doc: d('Filas de cabecera y de datos.', 'Header and data rows.'),
        fields: { headers: arr('table.content.rows[]'), rows: arr('table.content.rows[]') },
      },
      'table.content.rows[]': { doc: d('Una fila.', 'A row.'), fields: { cells: arr('table.content.rows[].cells[]') } },
      'table.content.rows[].cells[]': { doc: d('Una celda.', 'A cell.'), fields: { html: val('html', { default: '' }) } },
      'table.style': style(d('Tipografía, fondo y bordes.', 'Typography, background and borders.'), [...TYPOGRAPHY, 'background-color', ...BORDERS], {
        'font-family': 'inherit',
        'font-size': '14px',
        'font-weight': '400',
        'line-height': '120%',
        'text-align': 'left',
        direction: 'ltr',
        'letter-spacing': '0px',
        'background-color': 'transparent',
        'border-top': '1px solid #DDDDDD',
        'border-right': '1px solid #DDDDDD',
        'border-bottom': '1px solid #DDDDDD',
        'border-left': '1px solid #DDDDDD',
      }),
      'table.computedStyle': {
        doc: d('Colores de cabecera y filas.', 'Header and row colours.'),
        fields: {
          linkColor: linkColor(),
          alternateRowBackgroundColor: val('color'),
          headersFontSize: val('length', { default: '14px' }),
          headersFontWeight: val('font_weight', { default: '700' }),
          headersTextAlign: enm(['left', 'center', 'right'], { default: 'left' }),
          headersBackgroundColor: val('color', { default: '#F2F2F2' }),
          headersColor: val('color'),
        },
      },
    },
    example: {
      table: {
        content: {
          headers: [{ cells: [{ html: 'Producto' }, { html: 'Precio' }] }],
          rows: [{ cells: [{ html: 'Camiseta' }, { html: '19 €' }] }],
        },
      },
    },
  },
};

/** Beefree kinds Cartero does not render (plan features, page-builder blocks): an error, essential_not_supported. */
export const UNSUPPORTED_KINDS: readonly string[] = ['form', 'carousel', 'merge-content', 'addon'];

/**
 * Beefree's placeholder in an empty column ("drop content here"): Beefree itself renders nothing
 * for it, and so does Cartero; accepted without a finding.
 */
export const IGNORED_KINDS: readonly string[] = ['empty'];

export const SUPPORTED_KINDS: readonly string[] = Object.keys(KINDS);

// ---- accessors (the renderer and the checks read the document through these) ----

export function moduleType(kind: string): string {
  return MODULE_TYPE_PREFIX + kind;
}

/** The kind in a module type of the published form, else undefined. */
export function kindOfType(type: unknown): string | undefined {
  if (typeof type !== 'string' || !type.startsWith(MODULE_TYPE_PREFIX)) return undefined;
  const kind = type.slice(MODULE_TYPE_PREFIX.length);
  return /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(kind) ? kind : undefined;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A node type by name: a structural node, or (with a kind) one of the kind's descriptor nodes. */
export function nodeDecl(name: string, kind?: string): NodeDecl | undefined {
  if (kind !== undefined) {
    const k = KINDS[kind];
    if (k && Object.hasOwn(k.nodes, name)) return k.nodes[name];
  }
  return Object.hasOwn(NODES, name) ? NODES[name] : undefined;
}

/**
 * The content object of a module (descriptor[content_key], else an alias older documents use),
 * with the key it was found under; undefined when there is none.
 */
export function moduleContent(kind: string, descriptor: unknown): { key: string; content: Record<string, unknown> } | undefined {
  const k = KINDS[kind];
  if (!k || !isRecord(descriptor)) return undefined;
  for (const key of [k.content_key, ...(k.content_aliases ?? [])]) {
    const c = descriptor[key];
    if (isRecord(c)) return { key, content: c };
  }
  return undefined;
}

/** A field's own value, else its aliases' (older documents), else undefined. null counts as absent. */
export function readField(node: Record<string, unknown> | undefined, name: string, decl?: FieldDecl): unknown {
  if (!node) return undefined;
  const v = node[name];
  if (v !== undefined && v !== null) return v;
  if (decl?.is === 'value') {
    for (const a of decl.aliases ?? []) {
      const w = node[a];
      if (w !== undefined && w !== null) return w;
    }
  }
  return undefined;
}

/**
 * A node's declared scalar fields as the renderer should use them: the document's value when
 * present (and of an accepted JSON type), else the declared default; undeclared keys are dropped
 * (unknown fields have no effect). Nested objects and arrays are not included: read them with
 * their own node type.
 */
export function resolveNode(name: string, value: unknown, kind?: string): Record<string, string | number | boolean> {
  const decl = nodeDecl(name, kind);
  const out: Record<string, string | number | boolean> = {};
  if (!decl) return out;
  const node = isRecord(value) ? value : undefined;
  for (const [field, f] of Object.entries(decl.fields)) {
    if (f.is !== 'value') continue;
    const v = readField(node, field, f);
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[field] = v;
    else if (f.default !== undefined) out[field] = f.default;
  }
  return out;
}

/**
 * Each column's width in percent of its row. `grid-columns` is a share of 12; shares that do not
 * add up to 12 are applied proportionally; a missing or unusable share counts as an equal part of
 * what the others leave (or of 12 when they leave nothing).
 */
export function columnWidths(columns: readonly unknown[]): number[] {
  const shares = columns.map((c) => {
    const g = isRecord(c) ? c['grid-columns'] : undefined;
    return typeof g === 'number' && Number.isFinite(g) && g > 0 ? g : undefined;
  });
  const known = shares.reduce<number>((s, g) => s + (g ?? 0), 0);
  const missing = shares.filter((g) => g === undefined).length;
  const fill = missing === 0 ? 0 : known < 12 ? (12 - known) / missing : 12 / columns.length;
  const filled = shares.map((g) => g ?? fill);
  const total = filled.reduce((s, g) => s + g, 0);
  return filled.map((g) => (total > 0 ? (g / total) * 100 : 100 / columns.length));
}
