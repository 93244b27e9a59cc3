/**
 * Reading the document's values the way the renderer needs them. The document is schema-valid
 * when it reaches the renderer, but the format leaves most fields optional and real editors
 * omit many, so every read tolerates absence (and a value of another type counts as absent).
 * Normalisation lives here, in one place: vendor-prefixed keywords, bare numbers as pixels,
 * `transparent`/`none` as "no value".
 */

export type Json = Record<string, unknown>;

export function obj(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A non-empty string (numbers as their decimal form), else undefined. */
export function str(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  return s === '' ? undefined : s;
}

/** A string field as written (HTML content, labels): empty stays empty. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A link's href and target (images, buttons, menu items, icons): a target only with an href. */
export function linkAttributes(node: Json): { href: string | undefined; target: string | undefined } {
  const href = str(node.href);
  return { href, target: href ? str(node.target) : undefined };
}

export function bool(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

const VENDOR_PREFIXES = ['-webkit-', '-moz-', '-ms-', '-o-', '-khtml-'];

/**
 * A CSS value without a vendor prefix (`-webkit-center` -> `center`): editors copy these from
 * the browser's computed style, MJML's enums refuse them and mail clients ignore them.
 */
export function unprefixed(value: string): string {
  const lower = value.toLowerCase();
  for (const p of VENDOR_PREFIXES) if (lower.startsWith(p)) return value.slice(p.length);
  return value;
}

/**
 * A value that stays one CSS value wherever it is written (a style attribute, MJML's head
 * styles): none of `;` `{` `}` (which would end the declaration or the rule), `<` `>` (markup),
 * `\\` (an escape), a comment opener or a control character. Editors never write these in a
 * colour, length, border or font stack; a value holding one reads as absent, so the field's
 * default applies, as for any value the renderer cannot read.
 */
export function cssValue(value: unknown): string | undefined {
  const v = str(value);
  return v === undefined || /[;{}<>\\\u0000-\u001f\u007f]|\/\*/.test(v) ? undefined : v;
}

/** A CSS declaration value read from a style object, unprefixed. */
export function css(style: Json, property: string): string | undefined {
  const v = cssValue(style[property]);
  return v === undefined ? undefined : unprefixed(v);
}

export type Align = 'left' | 'center' | 'right';

/** text-align / align as MJML's enums take it (`start`/`end` read as left/right). */
export function align(value: unknown): Align | undefined {
  const v = str(value);
  if (v === undefined) return undefined;
  switch (unprefixed(v).toLowerCase()) {
    case 'left':
    case 'start':
      return 'left';
    case 'center':
      return 'center';
    case 'right':
    case 'end':
      return 'right';
    default:
      return undefined;
  }
}

/** Like align, keeping `justify` (mj-text accepts it). */
export function textAlign(value: unknown): Align | 'justify' | undefined {
  const v = str(value);
  if (v !== undefined && unprefixed(v).toLowerCase() === 'justify') return 'justify';
  return align(value);
}

/**
 * A length MJML's `unit(px,%)` types accept: `10px`, `50%`, `0`; a bare number (`"50"`, `32`)
 * is pixels, as editors mean it. Other units (em, rem, pt) are kept as written, so MJML's
 * validation names them at their node.
 */
export function length(value: unknown): string | undefined {
  const v = cssValue(value);
  if (v === undefined) return undefined;
  const s = unprefixed(v);
  if (isNumber(s)) return Number(s) === 0 ? '0px' : `${Number(s)}px`;
  return s;
}

/** A pixel count from `"110px"`, `110`, `"110"`; undefined for other units and non-positive values. */
export function pixels(value: unknown): number | undefined {
  const v = str(value);
  if (v === undefined) return undefined;
  const s = v.toLowerCase().endsWith('px') ? v.slice(0, -2).trim() : v;
  if (!isNumber(s)) return undefined;
  const n = Number(s);
  return n > 0 ? n : undefined;
}

function isNumber(s: string): boolean {
  if (s === '' || s.length > 32) return false;
  let dot = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e && !dot) dot = true;
    else if (c < 0x30 || c > 0x39) return false;
  }
  return s !== '.';
}

/** A colour, with `transparent` (and `none`) as "no colour": the layer below shows through. */
export function color(value: unknown): string | undefined {
  const v = cssValue(value);
  if (v === undefined) return undefined;
  const lower = v.toLowerCase();
  return lower === 'transparent' || lower === 'none' || lower === 'inherit' ? undefined : v;
}

/** The four paddings of a style object, each defaulting to 0 (MJML's own defaults are not Beefree's). */
export function paddings(style: Json, prefix = 'padding'): { top: string; right: string; bottom: string; left: string } {
  return {
    top: length(style[`${prefix}-top`]) ?? '0px',
    right: length(style[`${prefix}-right`]) ?? '0px',
    bottom: length(style[`${prefix}-bottom`]) ?? '0px',
    left: length(style[`${prefix}-left`]) ?? '0px',
  };
}

/** MJML's `padding` attribute (top right bottom left) of a style object: one attribute, not MJML's default plus four overrides. */
export function paddingAttributes(style: Json): { padding: string } {
  const p = paddings(style);
  return { padding: `${p.top} ${p.right} ${p.bottom} ${p.left}` };
}

/** A `border` shorthand (`1px solid #BBBBBB`), unprefixed; `none`/0-width borders as absent. */
export function border(value: unknown): string | undefined {
  const v = cssValue(value);
  if (v === undefined) return undefined;
  const parts = parseBorder(v);
  if (!parts) return unprefixed(v);
  if (parts.width === '0px' || parts.style === 'none' || parts.color === undefined) return undefined;
  return `${parts.width} ${parts.style} ${parts.color}`;
}

export interface BorderParts {
  width: string;
  style: string;
  /** undefined when transparent. */
  color: string | undefined;
}

const BORDER_STYLES = new Set(['none', 'hidden', 'dotted', 'dashed', 'solid', 'double', 'groove', 'ridge', 'inset', 'outset']);

/** `1px solid #BBBBBB` in any order; undefined when a part is not understood. */
export function parseBorder(value: string): BorderParts | undefined {
  let width: string | undefined;
  let style: string | undefined;
  let colour: string | undefined;
  let transparent = false;
  for (const raw of value.split(' ')) {
    const part = unprefixed(raw.trim());
    if (part === '') continue;
    const lower = part.toLowerCase();
    if (BORDER_STYLES.has(lower)) style = lower;
    else if (lower === 'transparent') transparent = true;
    else if (lower === '0' || /^\d/.test(lower)) width = length(part);
    else colour = part;
  }
  if (width === undefined && style === undefined && colour === undefined && !transparent) return undefined;
  return { width: width ?? '0px', style: style ?? 'none', color: transparent ? undefined : (colour ?? 'currentColor') };
}

/** The MJML border attributes of a style object: `border` when all four sides agree, else per side. */
export function borderAttributes(style: Json): Record<string, string | undefined> {
  const sides = ['top', 'right', 'bottom', 'left'].map((side) => border(style[`border-${side}`]));
  const all = border(style.border);
  if (sides.every((s) => s === undefined)) return { border: all };
  if (sides.every((s) => s === sides[0])) return { border: sides[0] };
  return { 'border-top': sides[0], 'border-right': sides[1], 'border-bottom': sides[2], 'border-left': sides[3] };
}

/** The URL of `url('...')` / `url("...")` / `url(...)`; undefined for `none`. */
export function backgroundUrl(value: unknown): string | undefined {
  const v = str(value);
  if (v === undefined || v.toLowerCase() === 'none') return undefined;
  if (!v.toLowerCase().startsWith('url(') || !v.endsWith(')')) return undefined;
  let inner = v.slice(4, -1).trim();
  if (inner.length >= 2 && (inner[0] === '"' || inner[0] === "'") && inner[inner.length - 1] === inner[0]) inner = inner.slice(1, -1);
  inner = inner.trim();
  // MJML writes the URL into CSS `url('...')` and VML: characters that would end either are encoded.
  return inner === '' ? undefined : inner.replace(/['"()\s\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** background-repeat as MJML's enum: repeat-x/-y read as repeat. */
export function backgroundRepeat(value: unknown): 'repeat' | 'no-repeat' | undefined {
  const v = css({ v: value }, 'v')?.toLowerCase();
  if (v === undefined) return undefined;
  return v === 'no-repeat' ? 'no-repeat' : v.startsWith('repeat') || v === 'space' || v === 'round' ? 'repeat' : undefined;
}

const GENERIC_FAMILIES = new Set(['serif', 'sans-serif', 'monospace', 'cursive', 'fantasy', 'system-ui', 'ui-serif', 'ui-sans-serif', 'ui-monospace', 'ui-rounded', 'emoji', 'math', 'fangsong']);

/**
 * A font stack that ends in fallbacks: web fonts do not load in many clients (Outlook desktop,
 * Gmail apps), so a stack of one web font gets the document's default stack (or sans-serif)
 * after it. `inherit` and empty stacks read as absent (the default applies).
 */
export function fontStack(value: unknown, fallback?: string): string | undefined {
  const v = cssValue(value);
  if (v === undefined || v.toLowerCase() === 'inherit') return undefined;
  const families = v.split(',').map((f) => f.trim()).filter((f) => f !== '');
  if (families.length === 0) return undefined;
  const last = families[families.length - 1]!.replace(/^['"]|['"]$/g, '').toLowerCase();
  if (GENERIC_FAMILIES.has(last)) return families.join(', ');
  return [...families, ...(fallback && fallback !== v ? [fallback] : ['sans-serif'])].join(', ');
}
