import { compile } from 'html-to-text';
import { htmlTokenizer } from './tokenizer.js';
import { RenderLimitExceeded } from './render-limit-exceeded.js';

// The text part derived from an HTML body: for a mail sent without a text part
// (domain/mail/render.ts) and for a template's text alternative (engines/beefree/render/plain-text.ts).

// html-to-text (a well-kept converter: block layout, lists, tables, entities): links keep their
// URL in brackets unless the text already is the URL; images (and any pixel) are dropped.
const toText = compile({
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    { selector: 'img', format: 'skip' },
  ],
});

/**
 * Bounds on the HTML a text part is derived from, past which html-to-text's time grows faster
 * than the input. Its tree is built by htmlparser2's Parser, whose work per tag grows with the
 * depth of the open elements (1 MB of unclosed <div> took 12 s, of <a> 26 s): MAX_TEXT_SOURCE_DEPTH
 * open elements at most (512, the depth past which Chromium's HTML parser stops nesting; no real
 * message comes near it). And every line inside a blockquote or list is prefixed once per such
 * ancestor (200,000 `x<br>` lines in 500 blockquotes took 50 s and made 200 MB of text): at most
 * MAX_TEXT_INDENT_WORK line prefixes, counted as one per tag and newline per enclosing
 * blockquote, ul or ol (an over-count; a newsletter inside one blockquote uses a few thousand).
 */
export const MAX_TEXT_SOURCE_DEPTH = 512;
export const MAX_TEXT_INDENT_WORK = 1_000_000;

export function htmlToPlainText(html: string): string {
  // An element takes at least 3 characters (`<a>`): short HTML is within both bounds.
  const problem = html.length > 3 * MAX_TEXT_SOURCE_DEPTH ? textSourceProblem(html) : undefined;
  if (problem) throw new RenderLimitExceeded(`the html ${problem}, too complex to derive a text part from; send a text part`);
  return toText(html);
}

// The Parser's rules for the elements a start tag closes implicitly, as htmlparser2 10 (the copy
// html-to-text uses) has them; htmlparser2 12 has more (<a> closes an open <a>), so a depth
// counted with these is never below the one either version reaches. Void elements never open.
const P = ['p'];
const FORM = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'];
const IMPLIED_CLOSE = new Map<string, readonly string[]>([
  ['tr', ['tr', 'th', 'td']], ['th', ['th']], ['td', ['thead', 'th', 'td']], ['body', ['head', 'link', 'script']],
  ['li', ['li']], ['option', ['option']], ['optgroup', ['optgroup', 'option']], ['dd', ['dd', 'dt']], ['dt', ['dd', 'dt']],
  ['rt', ['rt', 'rp']], ['rp', ['rt', 'rp']], ['tbody', ['thead', 'tbody']], ['tfoot', ['thead', 'tbody']],
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((t) => [t, FORM] as const),
  ...['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset',
    'figcaption', 'figure', 'footer', 'form', 'header', 'hr', 'main', 'nav', 'ol', 'pre', 'section', 'table', 'ul'].map((t) => [t, P] as const),
]);
const VOID = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

const INDENTING = new Set(['blockquote', 'ul', 'ol']);

/**
 * What would put html-to-text over MAX_TEXT_SOURCE_DEPTH or MAX_TEXT_INDENT_WORK, counted in
 * linear time on the tokens (a name -> count map answers "is it open" without searching the
 * stack). A self-closing `<x/>` is counted as open, as HTML has it outside SVG and MathML.
 */
function textSourceProblem(html: string): string | undefined {
  const stack: string[] = [];
  const open = new Map<string, number>();
  let indent = 0;
  let work = 0;
  let problem: string | undefined;
  const stop = (why: string) => {
    problem = why;
    tokenizer.pause();
  };
  const pop = () => {
    const name = stack.pop()!;
    open.set(name, open.get(name)! - 1);
    if (INDENTING.has(name)) indent--;
    return name;
  };
  const tag = () => {
    if ((work += indent) > MAX_TEXT_INDENT_WORK) stop(`prefixes more than ${MAX_TEXT_INDENT_WORK} lines for its nested blockquotes and lists`);
  };
  const tokenizer = htmlTokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        const name = html.slice(start, end).toLowerCase();
        const closes = IMPLIED_CLOSE.get(name);
        while (closes && stack.length && closes.includes(stack[stack.length - 1]!)) pop();
        tag();
        if (VOID.has(name)) return;
        stack.push(name);
        open.set(name, (open.get(name) ?? 0) + 1);
        if (INDENTING.has(name)) indent++;
        if (stack.length > MAX_TEXT_SOURCE_DEPTH) stop(`nests deeper than ${MAX_TEXT_SOURCE_DEPTH} elements`);
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        tag();
        if (open.get(name)) while (pop() !== name);
      },
      ontext(start, end) {
        if (indent) for (let i = start; i < end; i++) if (html.charCodeAt(i) === 0x0a) tag();
      },
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  return problem;
}
