import { decodeHTML } from 'entities';
import { DomUtils, parseDocument } from 'htmlparser2';
import { htmlTokenizer } from '../../html/tokenizer.js';

/**
 * The rich HTML a document carries (paragraph and list html, heading text, button labels, table
 * cells, html modules), made safe to place inside the layout: parsed by htmlparser2 (a real
 * HTML parser, with the HTML rules for implied and stray end tags) and serialised back, so a
 * fragment is balanced and cannot close the table cell it sits in (`</td></table>` in a
 * paragraph would otherwise break the whole mail). On the way:
 * - `<script>` elements (and the document-level `<base>`, `<meta>`, `<title>`) are removed;
 *   `<html>`, `<head>` and `<body>` wrappers (a whole page pasted into an html module) are
 *   replaced by their content;
 * - event handler attributes (`on*`) and `javascript:`/`vbscript:` URLs in href/src/action are
 *   removed;
 * - links without a colour of their own get the module's (else the document's) link colour,
 *   inline, as mail clients need it;
 * - options add the paragraph spacing to `<p>`, style lists and flatten blocks (button labels).
 * Entities, merge tags and conditional comments are kept as written (parsed and serialised with
 * decodeEntities off). One caveat: attribute values are written back in double quotes, so a
 * `"` inside a single-quoted attribute becomes `&quot;`.
 */
export interface FragmentOptions {
  linkColor?: string;
  /** Space under each paragraph but the last (paragraph modules' paragraphSpacing; 0 for legacy text). */
  paragraphSpacing?: string;
  /** Block elements (div, p) become their content separated by <br>: a button label is one line of inline text. */
  inline?: boolean;
  /** How top-level lists look (list modules): indent, space under each item, bullets, first number. */
  list?: ListStyle;
}

export interface ListStyle {
  indent?: string;
  spacing?: string;
  type?: string;
  position?: string;
  start?: string;
}

type Doc = ReturnType<typeof parseDocument>;
type Node = Doc['children'][number];
type Element = Extract<Node, { attribs: Record<string, string> }>;

/**
 * Deepest element nesting a fragment keeps its markup for. Editor output nests a dozen levels
 * (TinyMCE spans), a pasted email's tables a few dozen; past this a fragment is reduced to its
 * text (textOnly): htmlparser2's Parser costs time in proportion to the depth at every tag, the
 * DOM walks here recurse, and the text part (domain/mail/render.ts) refuses HTML nested past 512
 * elements. Checked first, in one linear pass of the tokenizer.
 */
export const MAX_FRAGMENT_DEPTH = 100;

/** Elements (tags, <script>, <style>) are the nodes with attributes. */
function isElement(node: Node): node is Element {
  return 'attribs' in node;
}

const REMOVED = new Set(['script', 'base', 'meta', 'title']);
const UNWRAPPED = new Set(['html', 'head', 'body']);
const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'background', 'xlink:href']);
const BLOCKS = new Set(['div', 'p']);

const PARSE = { decodeEntities: false } as const;

export function cleanFragment(html: string, options: FragmentOptions = {}): string {
  if (html === '') return '';
  if (nestsDeeperThan(html, MAX_FRAGMENT_DEPTH)) return textOnly(html);
  const doc = parseDocument(html, PARSE);
  const nodes = cleanChildren(doc.children, options);
  if (options.paragraphSpacing !== undefined) spaceParagraphs(nodes, options.paragraphSpacing);
  if (options.list) styleLists(nodes, options.list);
  return DomUtils.getOuterHTML(options.inline ? flatten(nodes) : nodes, PARSE);
}

function cleanChildren(children: readonly Node[], options: FragmentOptions): Node[] {
  const out: Node[] = [];
  for (const node of children) {
    if (node.type === 'directive') continue; // <!DOCTYPE>
    if (!isElement(node)) {
      out.push(node);
      continue;
    }
    const el = node;
    const name = el.name.toLowerCase();
    if (REMOVED.has(name)) continue;
    const kids = cleanChildren(el.children as Node[], options);
    if (UNWRAPPED.has(name)) {
      out.push(...kids);
      continue;
    }
    setChildren(el, kids);
    cleanAttributes(el);
    if (name === 'a' && options.linkColor && !declares(el.attribs.style, 'color')) {
      el.attribs.style = withDeclaration(el.attribs.style, `color:${options.linkColor}`, false);
    }
    out.push(el);
  }
  return out;
}

function cleanAttributes(el: Element): void {
  for (const [name, value] of Object.entries(el.attribs)) {
    const lower = name.toLowerCase();
    if (isEventHandler(lower) || (URL_ATTRIBUTES.has(lower) && isScriptUrl(value))) delete el.attribs[name];
  }
}

function isEventHandler(attribute: string): boolean {
  return attribute.length > 2 && attribute.slice(0, 2).toLowerCase() === 'on';
}

/**
 * javascript: / vbscript: as a browser reads the value: character references decoded
 * (`&#106;avascript:`), spaces and control characters (which URL parsing drops) ignored.
 */
function isScriptUrl(value: string): boolean {
  let v = '';
  for (const c of decodeHTML(value)) {
    if (c.charCodeAt(0) > 0x20) v += c.toLowerCase();
    if (v.length >= 11) break;
  }
  return v.startsWith('javascript:') || v.startsWith('vbscript:');
}

function setChildren(el: Element, children: Node[]): void {
  const list = el.children as Node[];
  list.length = 0;
  for (let i = 0; i < children.length; i++) {
    const c = children[i]!;
    c.parent = el;
    c.prev = children[i - 1] ?? null;
    c.next = children[i + 1] ?? null;
    list.push(c);
  }
}

function spaceParagraphs(nodes: Node[], spacing: string): void {
  // Every <p>, nested or not (the legacy text module wraps them in a div): clients' and MJML's
  // default paragraph margins would otherwise add space the editor never showed.
  const paragraphs = DomUtils.findAll((el) => el.name.toLowerCase() === 'p', nodes);
  paragraphs.forEach((p, i) => {
    const bottom = i === paragraphs.length - 1 ? '0' : spacing;
    // Before the author's own declarations, which win.
    if (!declares(p.attribs.style, 'margin')) p.attribs.style = withDeclaration(p.attribs.style, `margin:0;margin-bottom:${bottom}`, true);
  });
}

function styleLists(nodes: Node[], list: ListStyle): void {
  for (const node of nodes) {
    if (!isElement(node)) continue;
    const el = node;
    const name = el.name.toLowerCase();
    if (name !== 'ul' && name !== 'ol') continue;
    const declarations = ['margin:0', `padding:0 0 0 ${list.indent ?? '20px'}`];
    if (list.type) declarations.push(`list-style-type:${list.type}`);
    if (list.position) declarations.push(`list-style-position:${list.position}`);
    el.attribs.style = withDeclaration(el.attribs.style, declarations.join(';'), true);
    if (name === 'ol' && list.start && el.attribs.start === undefined) el.attribs.start = list.start;
    if (!list.spacing) continue;
    for (const li of el.children as Node[]) {
      if (isElement(li) && li.name.toLowerCase() === 'li') {
        li.attribs.style = withDeclaration(li.attribs.style, `margin-bottom:${list.spacing}`, true);
      }
    }
  }
}

/** Block elements replaced by their content, consecutive blocks separated by a line break. */
function flatten(nodes: Node[]): Node[] {
  const out: Node[] = [];
  let lastWasBlock = false;
  for (const node of nodes) {
    if (isElement(node) && BLOCKS.has(node.name.toLowerCase())) {
      const inner = flatten(node.children as Node[]);
      if (inner.length === 0) continue;
      if (lastWasBlock) out.push(lineBreak());
      out.push(...inner);
      lastWasBlock = true;
    } else {
      if (lastWasBlock && !(node.type === 'text' && DomUtils.getText(node).trim() === '')) out.push(lineBreak());
      lastWasBlock = false;
      out.push(node);
    }
  }
  return out;
}

function lineBreak(): Node {
  return parseDocument('<br>', PARSE).children[0]!;
}

/** Whether an inline style declares a property (or one of its longhands, for `margin`). */
function declares(style: string | undefined, property: string): boolean {
  if (!style) return false;
  return style.split(';').some((d) => {
    const name = d.split(':')[0]!.trim().toLowerCase();
    return name === property || name.startsWith(`${property}-`);
  });
}

function withDeclaration(style: string | undefined, declaration: string, first: boolean): string {
  const own = (style ?? '').trim();
  if (own === '') return `${declaration};`;
  return first ? `${declaration};${own}` : `${own}${own.endsWith(';') ? '' : ';'}${declaration};`;
}

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
// Elements a start tag of the same name closes (`<p>a<p>b`, `<li>`...): not one level deeper.
const SELF_CLOSING_SIBLINGS = new Set(['p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'option']);
const RAW_TEXT = new Set(['script', 'style']);

/** Whether the fragment's elements nest deeper than `limit` (an over-count: stray tags count as open). */
function nestsDeeperThan(html: string, limit: number): boolean {
  const stack: string[] = [];
  let deep = false;
  const tokenizer = htmlTokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (VOID.has(name) || (SELF_CLOSING_SIBLINGS.has(name) && stack[stack.length - 1] === name)) return;
        stack.push(name);
        if (stack.length > limit) {
          deep = true;
          tokenizer.pause();
        }
      },
      onclosetag(start, end) {
        const at = stack.lastIndexOf(html.slice(start, end).toLowerCase());
        if (at !== -1) stack.length = at;
      },
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  return deep;
}

/** The fragment's text, tags (and script/style content) dropped, character references kept. */
function textOnly(html: string): string {
  let out = '';
  let raw = '';
  const tokenizer = htmlTokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (RAW_TEXT.has(name)) raw = name;
      },
      onclosetag(start, end) {
        if (raw !== '' && html.slice(start, end).toLowerCase() === raw) raw = '';
      },
      ontext(start, end) {
        if (raw === '') out += html.slice(start, end).replaceAll('<', '&lt;').replaceAll('>', '&gt;');
      },
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  return out;
}
