import { escapeAttribute, escapeText } from 'entities';

/**
 * MJML's JSON form, which `mjml2html` takes directly: the renderer builds this tree from the
 * design document and never writes MJML markup. `line` is ours: MJML copies it into each
 * validation error, and the tree's Lines map turns it back into the document node that made it.
 */
export interface MjmlNode {
  tagName: string;
  attributes: Record<string, string>;
  children?: MjmlNode[];
  /** Raw HTML (mj-text, mj-button, mj-table...) or text already escaped (mj-title, mj-preview). */
  content?: string;
  line?: number;
}

/** Which document node an MJML node was built from: its uuid (or the nearest one) and pointer. */
export interface Origin {
  uuid: string | null;
  pointer: string;
}

/** Attribute values as written in the document; undefined and '' are left out. */
export type Attributes = Record<string, string | undefined>;

/**
 * Hands out line numbers and remembers where each came from. One per rendering, so the
 * numbers are dense and every MJML error names a node of this document.
 */
export class Lines {
  private readonly origins: Origin[] = [];

  origin(line: number | undefined): Origin | undefined {
    return line === undefined ? undefined : this.origins[line - 1];
  }

  /** An element with children. */
  node(tagName: string, attributes: Attributes, children: MjmlNode[], origin: Origin): MjmlNode {
    return { tagName, attributes: cleanAttributes(attributes), children, line: this.line(origin) };
  }

  /** An ending element (mj-text, mj-button, mj-table, mj-raw...): its content is raw HTML. */
  leaf(tagName: string, attributes: Attributes, html: string, origin: Origin): MjmlNode {
    return { tagName, attributes: cleanAttributes(attributes), content: html, line: this.line(origin) };
  }

  private line(origin: Origin): number {
    this.origins.push(origin);
    return this.origins.length;
  }
}

/**
 * MJML writes attribute values into the HTML between double quotes without escaping them
 * (mjml-core's htmlAttributes), so every value is escaped here: a `"` in an href cannot end
 * the attribute. Merge tags stay usable: `{{ url | default: "x" }}` becomes
 * `{{ url | default: 'x' }}`, the same Liquid without a double quote (a tag holding both kinds
 * of quote has its double quotes escaped, which keeps the HTML safe to preview unfilled).
 */
function cleanAttributes(attributes: Attributes): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === '') continue;
    out[name] = escapeAttributeValue(value);
  }
  return out;
}

/**
 * Text for mj-title and mj-preview, whose content MJML inserts as HTML. Merge tags pass
 * unchanged unless they hold `<`, `>` or `&` (escaped like the rest: no markup is ever written).
 */
export function textContent(text: string): string {
  return escapeText(text);
}

/**
 * escapeAttribute outside merge tags (`{{ ... }}`, `{% ... %}`: Liquid, what
 * domain/mail/merge-tags.ts fills at send time); inside them, `"` becomes `'`. A scan with
 * indexOf, linear in the value.
 */
function escapeAttributeValue(value: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const open = nextOpening(value, at);
    if (open === -1) break;
    const close = value.indexOf(value[open + 1] === '{' ? '}}' : '%}', open + 2);
    if (close === -1) break;
    const tag = value.slice(open, close + 2);
    out += escapeAttribute(value.slice(at, open)) + (tag.includes("'") ? tag.replaceAll('"', '&quot;') : tag.replaceAll('"', "'"));
    at = close + 2;
  }
  return out + escapeAttribute(value.slice(at));
}

/** The next `{{` or `{%` from `from`, or -1. */
function nextOpening(value: string, from: number): number {
  for (let i = value.indexOf('{', from); i !== -1 && i < value.length - 1; i = value.indexOf('{', i + 1)) {
    const next = value[i + 1];
    if (next === '{' || next === '%') return i;
  }
  return -1;
}
