import { escapeUTF8 } from 'entities';

/**
 * Writing values into CSS text. Inside a <style> element the HTML parser decodes no entities, so
 * a value is escaped for CSS (never for HTML: `&amp;` would reach the CSS as written and break a
 * Google Fonts URL), and nothing in it may end the element (`</style`).
 */

/**
 * A CSS string in double quotes: `"`, `\` and every control character (newlines included) as
 * CSS hex escapes, and `<` too, so no `</style` (nor `<!--`) can appear inside it. The space
 * after a hex escape ends it (CSS Syntax 4.3.7), so it is always written.
 */
export function cssString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\' || ch === '<' || ch === '>' || code < 0x20 || code === 0x7f) out += `\\${code.toString(16)} `;
    else out += ch;
  }
  return out + '"';
}

/** `url("...")` of a URL, as a CSS string (CSS Values 4: a quoted url() takes a string). */
export function cssUrl(url: string): string {
  return `url(${cssString(url)})`;
}

export interface WebFont {
  name: string;
  url: string;
}

/**
 * The <head> markup that loads the web fonts the HTML uses: a <link> (its href escaped for an
 * HTML attribute, `<` and `>` included) and an `@import url("...")` (escaped for CSS) for each,
 * outside Outlook, which would wait for them. MJML's own mj-font writes the same URL into both places unescaped and
 * builds a regular expression from the font name; so the renderer writes these itself, after
 * MJML, and decides which fonts are used the way MJML did: some `font-family` declaration of the
 * HTML names the font (case-insensitively). Linear: each distinct declaration once.
 */
export function webFontTags(fonts: WebFont[], html: string): string {
  if (fonts.length === 0) return '';
  const lower = html.toLowerCase();
  const stacks = new Set<string>();
  for (let at = lower.indexOf('font-family:'); at !== -1; at = lower.indexOf('font-family:', at + 12)) {
    let end = at + 12;
    while (end < lower.length && end - at < 1_000 && !';"}\n'.includes(lower[end]!)) end++;
    stacks.add(lower.slice(at + 12, end));
  }
  const used = fonts.filter((f) => {
    const name = f.name.toLowerCase();
    for (const stack of stacks) if (stack.includes(name)) return true;
    return false;
  });
  const urls = [...new Set(used.map((f) => f.url))];
  if (urls.length === 0) return '';
  return [
    '<!--[if !mso]><!-->',
    ...urls.map((url) => `<link href="${escapeUTF8(url)}" rel="stylesheet" type="text/css">`),
    '<style type="text/css">',
    ...urls.map((url) => `@import ${cssUrl(url)};`),
    '</style>',
    '<!--<![endif]-->',
  ].join('\n');
}

/** The HTML with the web-font tags at the end of its <head> (MJML's skeleton has exactly one). */
export function withWebFonts(html: string, fonts: WebFont[]): string {
  const tags = webFontTags(fonts, html);
  if (tags === '') return html;
  const head = html.indexOf('</head>');
  return head === -1 ? html : `${html.slice(0, head)}${tags}\n${html.slice(head)}`;
}
