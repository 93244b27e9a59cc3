import { decodeHTML } from 'entities';
import { DomUtils, parseDocument } from 'htmlparser2';
import { htmlToPlainText } from '../../html/plain-text.js';
import { RenderLimitExceeded } from '../../html/render-limit-exceeded.js';
import { DATA_TABLE_CLASS } from './modules/table.js';

/**
 * The text alternative of a rendered template: the mail renderer's own HTML -> text conversion
 * (engines/html/plain-text.ts: html-to-text, links as `text [url]`, images dropped), run on the
 * template's HTML after three adjustments that only the template renderer can make, because it
 * knows how it wrote the HTML:
 * - the preview block (mj-preview, the hidden preheader right after <body>) is left out: the
 *   preheader is not body text;
 * - a link around an image only becomes its alt text (`alt [url]`), or nothing without alt,
 *   instead of a bare URL line;
 * - each row of a table module becomes one line with ` | ` between cells (html-to-text runs
 *   table cells together, as it must for layout tables).
 * Runs of blank lines (nested layout blocks) are collapsed to one. Past html-to-text's bounds
 * (engines/html/render-limit-exceeded.ts) the text is the HTML's words, a line per block.
 */
export function templatePlainText(html: string): string {
  const doc = parseDocument(html, PARSE);
  const body = DomUtils.findOne((el) => el.name === 'body', doc.children);
  if (body) removePreviewBlock(body);
  for (const a of DomUtils.findAll((el) => el.name === 'a', doc.children)) textOfImageLink(a);
  for (const t of DomUtils.findAll((el) => hasClass(el, DATA_TABLE_CLASS), doc.children)) linearizeTable(t);
  try {
    return collapseBlankLines(htmlToPlainText(DomUtils.getOuterHTML(doc, PARSE)));
  } catch (e) {
    // Past html-to-text's bounds (thousands of lines in deeply nested lists): the words alone,
    // one block per line of the source, rather than no text part.
    if (!(e instanceof RenderLimitExceeded)) throw e;
    return wordsOnly(body ?? doc);
  }
}

const PARSE = { decodeEntities: false } as const;

type Doc = ReturnType<typeof parseDocument>;
type Node = Doc['children'][number];
type Element = Extract<Node, { attribs: Record<string, string> }>;

function isElement(node: Node): node is Element {
  return 'attribs' in node;
}

function hasClass(el: Element, cls: string): boolean {
  return (el.attribs.class ?? '').split(' ').includes(cls);
}

/** How mjml-body writes mj-preview: the first element of <body>, a div whose style starts with display:none. */
function removePreviewBlock(body: Element): void {
  const first = body.children.find((n) => isElement(n as Node)) as Element | undefined;
  if (first && first.name === 'div' && (first.attribs.style ?? '').replace(/\s/g, '').startsWith('display:none')) DomUtils.removeElement(first);
}

function textOfImageLink(a: Element): void {
  const kids = (a.children as Node[]).filter((n) => !(n.type === 'text' && DomUtils.textContent(n).trim() === ''));
  if (kids.length === 0 || !kids.every((n) => isElement(n) && n.name === 'img')) return;
  const alt = kids.map((n) => ((n as Element).attribs.alt ?? '').trim()).filter(Boolean).join(' ');
  if (alt === '') {
    DomUtils.removeElement(a);
    return;
  }
  const text = parseDocument(alt, PARSE).children;
  a.children.length = 0;
  for (const t of text) DomUtils.appendChild(a, t);
}

/** Rows as lines (div), cells as inline text separated by ` | `. */
function linearizeTable(container: Element): void {
  for (const tr of DomUtils.findAll((el) => el.name === 'tr', container.children)) {
    const cells = (tr.children as Node[]).filter((n): n is Element => isElement(n) && (n.name === 'td' || n.name === 'th'));
    if (cells.every((c) => DomUtils.textContent(c).trim() === '')) {
      DomUtils.removeElement(tr);
      continue;
    }
    tr.name = 'div';
    cells.forEach((cell, i) => {
      cell.name = 'span';
      if (i > 0) DomUtils.prepend(cell, parseDocument(' | ', PARSE).children[0]!);
    });
  }
}

const LINE_BREAKING = new Set(['p', 'div', 'li', 'tr', 'br', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'ul', 'ol', 'blockquote']);

/** The text with a line break after each block, spaces collapsed within lines. */
function wordsOnly(root: Doc | Element): string {
  for (const el of DomUtils.findAll((e) => LINE_BREAKING.has(e.name), root.children)) DomUtils.append(el, parseDocument('\n', PARSE).children[0]!);
  const lines = decodeHTML(DomUtils.textContent(root)).split('\n');
  return collapseBlankLines(lines.map((l) => l.replace(/\s+/g, ' ').trim()).join('\n'));
}

function collapseBlankLines(text: string): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const l = line.trimEnd();
    if (l === '' && (out.length === 0 || out[out.length - 1] === '')) continue;
    out.push(l);
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}
