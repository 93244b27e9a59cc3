import { escapeAttribute } from 'entities';

/**
 * The few content elements MJML has no component for and the renderer writes itself: the
 * heading's `<hN>`, a `dir` wrapper for right-to-left text, the rows and cells inside
 * mj-table (whose content is its inner HTML). Never layout: sections, columns and every
 * block around content are MJML's. Attribute values are escaped; the inner HTML is a
 * fragment already cleaned by fragment.ts.
 */
export function element(tag: string, attributes: Record<string, string | undefined>, innerHtml: string): string {
  let out = `<${tag}`;
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === '') continue;
    out += ` ${name}="${escapeAttribute(value)}"`;
  }
  return `${out}>${innerHtml}</${tag}>`;
}

/** An inline style from declarations; absent values are left out. */
export function style(declarations: Record<string, string | undefined>): string | undefined {
  let out = '';
  for (const [name, value] of Object.entries(declarations)) {
    if (value === undefined || value === '') continue;
    out += `${name}:${value};`;
  }
  return out === '' ? undefined : out;
}
