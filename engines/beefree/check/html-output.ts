import { doIUseEmail } from '@jsx-email/doiuse-email';
import { htmlTokenizer } from '../../html/tokenizer.js';
import type { Finding } from '../findings.js';
import { GMAIL_CLIP_BYTES, MAX_HTML_BYTES } from '../format/limits.js';
import { finding } from './finding.js';

/**
 * Checks of the generated HTML: its size (an error over MAX_HTML_BYTES, a warning over Gmail's
 * clipping point) and the CSS and HTML features the main mail clients do not support, by the
 * Can I email data (@jsx-email/doiuse-email). These are about the whole message, not a node:
 * uuid null, pointer ''.
 */

/** The main clients: by far most opens (Apple Mail, Gmail, Outlook), plus Yahoo. */
export const CSS_SUPPORT_CLIENTS = ['apple-mail.*', 'gmail.*', 'outlook.*', 'yahoo.*'];

/**
 * Features the renderer itself emits in every message, each with its fallback: the responsive
 * layer (media queries and the selectors in them), MJML's resets and hidden preview text,
 * accessibility attributes that a client ignoring them loses nothing by, links' target. A
 * suggestion about them would fire on every template and tell the designer nothing they can act
 * on, so they are left out; what remains comes from the design (rounded corners, background
 * images, web fonts, CSS inside html modules...).
 */
export const RENDERER_FEATURES: ReadonlySet<string> = new Set([
  '@media',
  'Class selector',
  'ID selector',
  'Type selector',
  'Descendant combinator',
  'Chaining selectors',
  '<body> element',
  'role attribute',
  'aria-label attribute',
  'target attribute',
  'Local anchors',
  'display:none',
  'opacity',
  'overflow',
  'outline',
  'word-spacing',
  'word-break',
  'border-spacing',
  'table-layout',
  // MJML's collapsible (hamburger) menu shows and hides its items with it, in its stylesheet.
  'visibility',
]);

export function checkHtmlSize(html: string): Finding[] {
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > MAX_HTML_BYTES) {
    return [finding('html_too_large', '', null, `the generated HTML is ${bytes} bytes, over the maximum of ${MAX_HTML_BYTES}`, { bytes, max_bytes: MAX_HTML_BYTES })];
  }
  if (bytes > GMAIL_CLIP_BYTES) {
    return [finding('html_gmail_clipping', '', null, `the generated HTML is ${bytes} bytes: Gmail clips messages over about ${GMAIL_CLIP_BYTES}`, { bytes, limit_bytes: GMAIL_CLIP_BYTES })];
  }
  return [];
}

/** One suggestion per unsupported feature, naming the clients, in feature order. */
export function checkCssSupport(html: string): Finding[] {
  const result = doIUseEmail(compactHtml(html), { emailClients: CSS_SUPPORT_CLIENTS });
  if (result.success) return [];
  const byFeature = new Map<string, Set<string>>();
  for (const e of result.errors) {
    const m = /^`([^`]+)` is not supported by `([^`]+)`$/.exec(e);
    if (!m || RENDERER_FEATURES.has(m[1])) continue;
    const set = byFeature.get(m[1]) ?? new Set<string>();
    set.add(m[2]);
    byFeature.set(m[1], set);
  }
  return [...byFeature.keys()].sort().map((feature) => {
    const clients = [...byFeature.get(feature)!].sort();
    return finding('css_client_support', '', null, `${feature} is not supported by ${clients.join(', ')}`, { feature, clients });
  });
}

/**
 * The same features in a fraction of the work: doiuse judges each element by its tag name and
 * attributes alone, each inline style declaration on its own and each stylesheet by its rules,
 * while a message repeats the same markup and the same declarations row after row. So every
 * distinct start tag once (its style attribute emptied, empty, side by side), every distinct
 * inline declaration once (each on a <div>) and every distinct <style> text once give the same
 * findings as the whole message, several times faster.
 */
export function compactHtml(html: string): string {
  const tags = new Set<string>();
  const declarations = new Set<string>();
  const styles = new Set<string>();
  let current = '';
  let attrs: string[] = [];
  let attrName = '';
  let attrValue = '';
  let inStyle = false;
  let styleText = '';
  const endTag = () => {
    if (current === '') return;
    if (current === 'style') inStyle = true;
    else tags.add(`<${current}${attrs.length ? ' ' + attrs.join(' ') : ''}></${current}>`);
    current = '';
  };
  const tokenizer = htmlTokenizer(
    { decodeEntities: true },
    {
      onopentagname(start, end) {
        current = html.slice(start, end).toLowerCase();
        attrs = [];
        styleText = '';
      },
      onattribname(start, end) {
        attrName = html.slice(start, end).toLowerCase();
        attrValue = '';
      },
      onattribdata(start, end) {
        attrValue += html.slice(start, end);
      },
      onattribentity(codepoint) {
        attrValue += String.fromCodePoint(codepoint);
      },
      onattribend() {
        if (attrName === 'style') {
          for (const d of splitDeclarations(attrValue)) if (!isNoOp(d)) declarations.add(d);
          attrs.push('style=""');
        } else {
          attrs.push(`${attrName}="${escapeQuoted(attrValue)}"`);
        }
      },
      onopentagend: endTag,
      onselfclosingtag: endTag,
      ontext(start, end) {
        if (inStyle) styleText += html.slice(start, end);
      },
      onclosetag(start, end) {
        if (inStyle && html.slice(start, end).toLowerCase() === 'style') {
          styles.add(styleText);
          inStyle = false;
        }
      },
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  return [
    ...[...styles].map((s) => `<style>${s}</style>`),
    ...tags,
    ...[...declarations].map((d) => `<div style="${escapeQuoted(d)}"></div>`),
  ].join('\n');
}

/**
 * A declaration a client that does not support it renders the same without, because it only
 * restates the initial value: a zero radius, padding or margin (`border-radius:0px`, what the
 * renderer writes for square corners) or `float:none`. Telling the designer that Outlook
 * ignores them would be noise. (Not any zero: `opacity:0` hides, ignoring it shows.)
 */
function isNoOp(declaration: string): boolean {
  const colon = declaration.indexOf(':');
  if (colon === -1) return false;
  const property = declaration.slice(0, colon).trim().toLowerCase();
  const value = declaration.slice(colon + 1).replace('!important', '').trim().toLowerCase();
  const zero = ['0', '0px', '0%', '0em', '0rem', '0pt'].includes(value);
  const initiallyZero = property.startsWith('padding') || property.startsWith('margin') || (property.startsWith('border') && property.endsWith('radius'));
  return (zero && initiallyZero) || (property === 'float' && value === 'none');
}

function escapeQuoted(v: string): string {
  return v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

/** A style attribute's declarations, split at the `;` outside quotes and parentheses. */
export function splitDeclarations(style: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i <= style.length; i++) {
    const c = style[i];
    if (i === style.length || (c === ';' && depth === 0 && quote === '')) {
      const d = style.slice(start, i).trim();
      if (d !== '') out.push(d);
      start = i + 1;
    } else if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '(') {
      depth++;
    } else if (c === ')' && depth > 0) {
      depth--;
    }
  }
  return out;
}
