import { CSS_PROPERTIES } from './css.js';
import { KINDS, NODES, IGNORED_KINDS, PREFIX, UNSUPPORTED_KINDS, moduleType, type FieldDecl, type NodeDecl } from './nodes.js';
import { GMAIL_CLIP_BYTES, MAX_CONFIG_BYTES, MAX_HTML_BYTES } from './limits.js';
import { RULES } from './rules.js';
import { VALUE_TYPES, type Doc } from './value-types.js';

/**
 * The Markdown `format` text, generated from the declaration: the same tables in Spanish or
 * English; only the words change with `lang`.
 */
export type Lang = 'es' | 'en';

const T = {
  title: { es: 'Formato del documento de diseño (`config`)', en: 'Design document format (`config`)' },
  intro: {
    es: [
      `El diseño de una plantilla es un documento JSON del editor Beefree: un documento creado en cualquier editor basado en Beefree se guarda, valida, genera y envía sin cambios, y uno creado aquí se abre en ese editor. Prefijo publicado: \`${PREFIX}\`.`,
      'Un campo que no aparece aquí es desconocido: se acepta, se guarda tal cual y no tiene efecto (los editores añaden `comments`, `translations`, `metadata`, `mobileStyle`, `hoverStyle`...). `null` en un campo opcional equivale a no ponerlo. Un campo omitido toma el valor por defecto de la tabla, que puede diferir del del editor: parta del `skeleton`, de `defaults` o del `config` de una plantilla existente.',
      'El documento se guarda byte a byte como se envía; la normalización (valores con prefijo de fabricante, anchos que no suman 12) solo ocurre al generar el HTML. Para cambiar el diseño, lea el documento, modifíquelo y envíelo entero.',
    ],
    en: [
      `A template's design is a JSON document of the Beefree email editor: a document made in any Beefree-based editor is stored, validated, rendered and sent unchanged, and one made here opens in that editor. Published prefix: \`${PREFIX}\`.`,
      'A field not listed here is unknown: it is accepted, stored as is and has no effect (editors add `comments`, `translations`, `metadata`, `mobileStyle`, `hoverStyle`...). `null` in an optional field is the same as leaving it out. An omitted field takes the default in the tables, which may differ from the editor\'s: start from the `skeleton`, from `defaults` or from an existing template\'s `config`.',
      'The document is stored byte for byte as sent; normalisation (vendor-prefixed values, widths that do not add up to 12) happens only when the HTML is generated. To change the design, read the document, modify it and send it whole.',
    ],
  },
  structure: { es: 'Estructura', en: 'Structure' },
  structureText: {
    es: [
      '`page.rows[]` son las filas, de arriba abajo. Cada fila tiene `columns[]`; cada columna tiene `modules[]`, los bloques de contenido, de arriba abajo.',
      'Columnas: `grid-columns` es la parte de cada columna en una rejilla de 12; las de una fila suman 12 (12; 6+6; 4+4+4; 3+9; 8+4...). Si no suman 12 se reparten en proporción (aviso). En pantallas estrechas las columnas se apilan salvo que `row.content.computedStyle.rowColStackOnMobile` sea false; `rowReverseColStackOnMobile` las apila en orden inverso.',
      'uuid: filas, columnas y módulos llevan `uuid`, un identificador (UUID) único en el documento. Los hallazgos de la validación lo citan (el del nodo o el de su antecesor más cercano que lo tenga). Un uuid repetido es un aviso, nunca un rechazo; dé uno nuevo a cada nodo que cree.',
      'Módulos: `type` es `' + moduleType('<tipo>') + '`; `descriptor` guarda el contenido bajo la clave de contenido del tipo, más `style` (relleno y alineación del bloque) y `computedStyle` (visibilidad).',
    ],
    en: [
      '`page.rows[]` are the rows, top to bottom. Each row has `columns[]`; each column has `modules[]`, the content blocks, top to bottom.',
      'Columns: `grid-columns` is each column\'s share of a 12-unit grid; the shares of a row add up to 12 (12; 6+6; 4+4+4; 3+9; 8+4...). When they do not, they are applied proportionally (a warning). On narrow screens columns stack unless `row.content.computedStyle.rowColStackOnMobile` is false; `rowReverseColStackOnMobile` stacks them in reverse order.',
      'uuid: rows, columns and modules carry `uuid`, an identifier (a UUID) unique in the document. Validation findings cite it (the node\'s, or its nearest ancestor\'s that has one). A repeated uuid is a warning, never a rejection; give each node you create a new one.',
      'Modules: `type` is `' + moduleType('<kind>') + '`; `descriptor` holds the content under the kind\'s content key, plus `style` (the block\'s padding and alignment) and `computedStyle` (visibility).',
    ],
  },
  modules: { es: 'Tipos de módulo', en: 'Module kinds' },
  modulesHead: { es: '| tipo | type | clave de contenido | qué es |', en: '| kind | type | content key | what it is |' },
  unsupported: {
    es: `Tipos de Beefree que Cartero no genera (error essential_not_supported): ${UNSUPPORTED_KINDS.map((k) => `\`${k}\``).join(', ')}. El módulo \`${IGNORED_KINDS.join('`, `')}\` (marcador de columna vacía) se acepta y no muestra nada.`,
    en: `Beefree kinds Cartero does not render (error essential_not_supported): ${UNSUPPORTED_KINDS.map((k) => `\`${k}\``).join(', ')}. The \`${IGNORED_KINDS.join('`, `')}\` module (an empty column's placeholder) is accepted and shows nothing.`,
  },
  valueTypes: { es: 'Tipos de valor', en: 'Value types' },
  valueTypesHead: { es: '| tipo | JSON | valor |', en: '| type | JSON | value |' },
  nodes: { es: 'Nodos y campos', en: 'Nodes and fields' },
  fieldsHead: { es: '| campo | tipo | por defecto | notas |', en: '| field | type | default | notes |' },
  required: { es: 'obligatorio', en: 'required' },
  editorOnly: { es: 'del editor, sin efecto en el HTML', en: 'editor state, no effect on the HTML' },
  descriptors: { es: 'Descriptor de cada tipo de módulo', en: 'Descriptor of each module kind' },
  css: { es: 'Propiedades CSS', en: 'CSS properties' },
  cssHead: { es: '| propiedad | tipo |', en: '| property | type |' },
  cssText: {
    es: 'Los objetos `style` usan estas propiedades (nombres CSS); cada nodo de estilo lista las suyas arriba. Otras propiedades no tienen efecto.',
    en: 'The `style` objects use these properties (CSS names); each style node lists its own above. Other properties have no effect.',
  },
  rules: { es: 'Reglas de validación', en: 'Validation rules' },
  rulesText: {
    es: 'Cada hallazgo tiene `level` (error, warning, suggestion), `rule`, `uuid`, `pointer` (JSON Pointer en el documento) y `message`. Los errores rechazan la creación, el PATCH y la validación con 422 (`errors[]`, con `params.rule` y `params.uuid`); los avisos y sugerencias se devuelven en `findings` y nunca bloquean. Las etiquetas de combinación (`{{...}}`, `*|UNSUB|*`) en enlaces son válidas.',
    en: 'Each finding has `level` (error, warning, suggestion), `rule`, `uuid`, `pointer` (JSON Pointer into the document) and `message`. Errors reject create, PATCH and validate with 422 (`errors[]`, with `params.rule` and `params.uuid`); warnings and suggestions come back in `findings` and never block. Merge tags (`{{...}}`, `*|UNSUB|*`) in links are fine.',
  },
  rulesHead: { es: '| regla | nivel | código 422 | cuándo |', en: '| rule | level | 422 code | when |' },
  limits: { es: 'Límites', en: 'Limits' },
  limitsRows: {
    es: [
      `| documento (JSON, UTF-8) | ${MAX_CONFIG_BYTES} bytes | error |`,
      `| HTML generado | ${MAX_HTML_BYTES} bytes | error template_html_too_large |`,
      `| HTML generado, recorte de Gmail | ${GMAIL_CLIP_BYTES} bytes | aviso |`,
    ],
    en: [
      `| document (JSON, UTF-8) | ${MAX_CONFIG_BYTES} bytes | error |`,
      `| generated HTML | ${MAX_HTML_BYTES} bytes | error template_html_too_large |`,
      `| generated HTML, Gmail clipping | ${GMAIL_CLIP_BYTES} bytes | warning |`,
    ],
  },
  limitsHead: { es: '| qué | límite | al superarlo |', en: '| what | limit | when over |' },
  start: { es: 'Cómo empezar', en: 'How to start' },
  startText: {
    es: '`skeleton` es un documento mínimo válido sin avisos (una fila con una columna vacía). `defaults.row`, `defaults.column` y `defaults.modules.<tipo>` son los valores iniciales de una fila, columna o módulo nuevos: añada un `uuid` nuevo a cada uno. `GET /v1/mail-templates/format/modules/{tipo}` da un tipo en detalle con un módulo de ejemplo. El asunto y el preheader que se envían son los campos `subject` y `preheader` de la plantilla (sugerencia si faltan); `page.head.meta` es del editor.',
    en: '`skeleton` is a minimal valid document without warnings (one row with one empty column). `defaults.row`, `defaults.column` and `defaults.modules.<kind>` are the starting values of a new row, column or module: add a new `uuid` to each. `GET /v1/mail-templates/format/modules/{kind}` gives one kind in detail with an example module. The subject and preheader that are sent are the template\'s `subject` and `preheader` fields (a suggestion when missing); `page.head.meta` belongs to the editor.',
  },
} satisfies Record<string, Record<Lang, unknown>>;

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (v: unknown) => (v === undefined ? '' : `\`${JSON.stringify(v)}\``);

function typeText(f: FieldDecl, lang: Lang): string {
  switch (f.is) {
    case 'value':
      return f.values ? `enum: ${f.values.map((v) => `\`${v}\``).join(', ')}` : f.type;
    case 'object':
      return `object (${f.node})`;
    case 'array':
      return `array (${f.items})`;
    case 'descriptor':
      return lang === 'es' ? 'object (descriptor del tipo)' : 'object (the kind\'s descriptor)';
  }
}

function notes(f: FieldDecl, lang: Lang): string {
  const parts: string[] = [];
  if (f.required) parts.push(T.required[lang]);
  if (f.editor) parts.push(T.editorOnly[lang]);
  if (f.doc) parts.push(f.doc[lang]);
  if (f.is === 'value' && f.aliases?.length) parts.push((lang === 'es' ? 'también: ' : 'also: ') + f.aliases.map((a) => `\`${a}\``).join(', '));
  return parts.join('; ');
}

function nodeSection(name: string, n: NodeDecl, lang: Lang, level: string): string[] {
  const out = [`${level} \`${name}\``, '', n.doc[lang], '', T.fieldsHead[lang], '|---|---|---|---|'];
  for (const [field, f] of Object.entries(n.fields)) {
    out.push(`| \`${field}\` | ${cell(typeText(f, lang))} | ${cell(f.is === 'value' ? code(f.default) : '')} | ${cell(notes(f, lang))} |`);
  }
  out.push('');
  return out;
}

function docText(d: Doc, lang: Lang): string {
  return d[lang];
}

export function formatMarkdown(lang: Lang): string {
  const out: string[] = [`# ${T.title[lang]}`, '', ...T.intro[lang].flatMap((p) => [p, '']), `## ${T.structure[lang]}`, ''];
  out.push(...T.structureText[lang].flatMap((p) => [p, '']));

  out.push(`## ${T.modules[lang]}`, '', T.modulesHead[lang], '|---|---|---|---|');
  for (const k of Object.values(KINDS)) out.push(`| \`${k.kind}\` | \`${moduleType(k.kind)}\` | \`${k.content_key}\` | ${cell(docText(k.doc, lang))} |`);
  out.push('', T.unsupported[lang], '');

  out.push(`## ${T.valueTypes[lang]}`, '', T.valueTypesHead[lang], '|---|---|---|');
  for (const [name, v] of Object.entries(VALUE_TYPES)) out.push(`| ${name} | ${v.json.join(' / ')} | ${cell(v.doc[lang])} |`);
  out.push('');

  out.push(`## ${T.nodes[lang]}`, '');
  for (const [name, n] of Object.entries(NODES)) out.push(...nodeSection(name, n, lang, '###'));

  out.push(`## ${T.descriptors[lang]}`, '');
  for (const k of Object.values(KINDS)) {
    out.push(`### ${k.kind}`, '', `\`${moduleType(k.kind)}\`: ${docText(k.doc, lang)} ${lang === 'es' ? 'Clave de contenido' : 'Content key'}: \`${k.content_key}\`.`, '');
    if (k.content_aliases?.length) {
      out.push(
        lang === 'es'
          ? `Documentos antiguos ponen el contenido bajo ${k.content_aliases.map((a) => `\`${a}\``).join(', ')}; se lee igual.`
          : `Older documents put the content under ${k.content_aliases.map((a) => `\`${a}\``).join(', ')}; it is read the same way.`,
        '',
      );
    }
    for (const [name, n] of Object.entries(k.nodes)) out.push(...nodeSection(name, n, lang, '####'));
  }

  out.push(`## ${T.css[lang]}`, '', T.cssText[lang], '', T.cssHead[lang], '|---|---|');
  for (const [p, c] of Object.entries(CSS_PROPERTIES)) {
    const cc = c as { type: string; values?: readonly string[] };
    out.push(`| \`${p}\` | ${cc.values ? `enum: ${cc.values.map((v) => `\`${v}\``).join(', ')}` : cc.type} |`);
  }
  out.push('');

  out.push(`## ${T.rules[lang]}`, '', T.rulesText[lang], '', T.rulesHead[lang], '|---|---|---|---|');
  for (const [name, r] of Object.entries(RULES)) out.push(`| \`${name}\` | ${r.level} | ${'code' in r ? r.code : ''} | ${cell(r.doc[lang])} |`);
  out.push('');

  out.push(`## ${T.limits[lang]}`, '', T.limitsHead[lang], '|---|---|---|', ...T.limitsRows[lang], '');
  out.push(`## ${T.start[lang]}`, '', T.startText[lang], '');
  return out.join('\n');
}
