import { kindOfType, moduleContent, resolveNode } from '../format/nodes.js';
import type { Inherited } from './context.js';
import { textContent, type Lines, type MjmlNode, type Origin } from './mjml-tree.js';
import { buildRow } from './rows.js';
import { arr, color, fontStack, obj, pixels, str } from './values.js';
import type { WebFont } from './css-text.js';
import { HIDE_ON_DESKTOP, HIDE_ON_MOBILE, VISIBILITY_CSS } from './visibility.js';

/** What the template adds to its design: the preheader and the page title (its subject). */
export interface RenderMeta {
  preheader: string | null;
  title: string | null;
}

const DEFAULT_FONT = 'Arial, Helvetica, sans-serif';

/**
 * The whole MJML tree of a design document: head (title, preview text, web fonts, default font,
 * visibility media queries) and body (width and background from the body's properties, one
 * section per row). The `lang` and `dir` of the HTML come from head.meta.lang; a document whose
 * every explicit text direction is rtl is rtl too.
 */
export function buildMjml(doc: unknown, meta: RenderMeta, lines: Lines): MjmlNode {
  const page = obj(obj(doc).page);
  const body = obj(page.body);
  const bodyContent = obj(body.content);
  const bodyStyle = resolveNode('page.body.content.style', bodyContent.style);
  const bodyComputed = resolveNode('page.body.content.computedStyle', bodyContent.computedStyle);
  const outer = resolveNode('page.body.container.style', obj(body.container).style);
  const headMeta = resolveNode('page.head.meta', obj(obj(page.head).meta));
  const rows = arr(page.rows);

  const lang = str(headMeta.lang);
  const inherited: Inherited = {
    fontFamily: fontStack(bodyStyle['font-family']) ?? DEFAULT_FONT,
    color: color(bodyStyle.color) ?? '#000000',
    linkColor: color(bodyComputed.linkColor) ?? '#0068A5',
    dir: isRightToLeft(lang) || allTextRightToLeft(rows) ? 'rtl' : 'ltr',
  };
  const width = Math.round(pixels(bodyComputed.messageWidth) ?? 600);
  const bodyOrigin: Origin = { uuid: null, pointer: '/page/body' };

  const sections = rows.flatMap((row, i) =>
    buildRow(row, i, { width, messageBackground: color(bodyComputed.messageBackgroundColor), inherited }, lines),
  );

  const head: MjmlNode[] = [];
  const title = meta.title ?? str(headMeta.title);
  if (title) head.push(lines.leaf('mj-title', {}, textContent(title), { uuid: null, pointer: '/page/head/meta/title' }));
  if (meta.preheader) head.push(lines.leaf('mj-preview', {}, textContent(meta.preheader), { uuid: null, pointer: '' }));
  // Web fonts are linked after MJML (render/css-text.ts: withWebFonts), never through mj-font.
  head.push(lines.node('mj-attributes', {}, [lines.node('mj-all', { 'font-family': inherited.fontFamily }, [], bodyOrigin)], bodyOrigin));
  if (usesVisibilityClasses(sections)) head.push(lines.leaf('mj-style', {}, VISIBILITY_CSS, bodyOrigin));

  return lines.node(
    'mjml',
    { lang, dir: inherited.dir },
    [
      lines.node('mj-head', {}, head, bodyOrigin),
      lines.node('mj-body', { width: `${width}px`, 'background-color': color(outer['background-color']) }, sections, bodyOrigin),
    ],
    { uuid: null, pointer: '' },
  );
}

// Scripts written right to left (the languages whose primary subtag is one of these).
const RTL_LANGUAGES = new Set(['ar', 'arc', 'ckb', 'dv', 'fa', 'ha', 'he', 'iw', 'khw', 'ks', 'ku', 'ps', 'sd', 'ur', 'yi']);

function isRightToLeft(lang: string | undefined): boolean {
  if (lang === undefined) return false;
  return RTL_LANGUAGES.has(lang.split(/[-_]/)[0]!.toLowerCase());
}

function allTextRightToLeft(rows: unknown[]): boolean {
  let rtl = 0;
  let ltr = 0;
  for (const row of rows) {
    for (const column of arr(obj(row).columns)) {
      for (const module of arr(obj(column).modules)) {
        const m = obj(module);
        const kind = kindOfType(m.type);
        if (kind === undefined) continue;
        const direction = str(obj(moduleContent(kind, m.descriptor)?.content.style).direction)?.toLowerCase();
        if (direction === 'rtl') rtl++;
        else if (direction === 'ltr') ltr++;
      }
    }
  }
  return rtl > 0 && ltr === 0;
}

function usesVisibilityClasses(nodes: MjmlNode[]): boolean {
  return nodes.some((n) => {
    const cls = n.attributes['css-class'] ?? '';
    return cls.includes(HIDE_ON_MOBILE) || cls.includes(HIDE_ON_DESKTOP) || usesVisibilityClasses(n.children ?? []);
  });
}

/** The document's web fonts that have both a name and a URL, in document order. */
export function webFonts(doc: unknown): WebFont[] {
  const body = obj(obj(obj(doc).page).body);
  return arr(body.webFonts).flatMap((font) => {
    const f = resolveNode('page.body.webFonts[]', font);
    const name = str(f.name);
    const url = str(f.url);
    return name && url ? [{ name, url }] : [];
  });
}
