import { rgb as contrastRatio } from 'wcag-contrast';
import type { Finding } from '../findings.js';
import { isRecord, kindOfType, moduleContent, resolveNode } from '../format/nodes.js';
import { finding } from './finding.js';
import { eachModule } from './walk.js';

/**
 * Text against its background, by WCAG 2 (wcag-contrast computes the ratio): under AA (4.5:1,
 * or 3:1 for large text: 24px, or 18.66px bold) is a warning. The text colour is the module's
 * own, else the row's, else the body's; the background is the nearest non-transparent one going
 * out: the module's own (a button's, a table's), the column, the row's content, the row's
 * full-width band, the message area, the outer background. A background image on the way, or a
 * colour this check cannot read (a CSS function other than rgb/rgba, a translucent colour),
 * leaves the pair unjudged rather than guessed. Colours set inline inside the HTML text are not
 * seen.
 */
type Rgb = [number, number, number];

const NAMED: Record<string, Rgb> = {
  black: [0, 0, 0], white: [255, 255, 255], red: [255, 0, 0], green: [0, 128, 0], blue: [0, 0, 255],
  yellow: [255, 255, 0], gray: [128, 128, 128], grey: [128, 128, 128], silver: [192, 192, 192],
  maroon: [128, 0, 0], purple: [128, 0, 128], fuchsia: [255, 0, 255], lime: [0, 255, 0],
  olive: [128, 128, 0], navy: [0, 0, 128], teal: [0, 128, 128], aqua: [0, 255, 255], orange: [255, 165, 0],
};

/** A colour: an opaque triplet, 'transparent' (look further out), or undefined (cannot judge). */
export function parseColor(v: unknown): Rgb | 'transparent' | undefined {
  if (v === undefined || v === null) return 'transparent'; // not set: look further out
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  if (s === '' || s === 'transparent' || s === 'inherit' || s === 'initial' || s === 'none') return 'transparent';
  const m = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(s);
  if (m) {
    let h = m[1];
    if (h.length <= 4) h = [...h].map((c) => c + c).join('');
    const alpha = h.length === 8 ? parseInt(h.slice(6, 8), 16) : 255;
    if (alpha === 0) return 'transparent';
    if (alpha !== 255) return undefined;
    return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16)];
  }
  if ((s.startsWith('rgb(') || s.startsWith('rgba(')) && s.endsWith(')')) {
    const parts = s.slice(s.indexOf('(') + 1, -1).split(/[\s,/]+/).filter((p) => p !== '');
    if (parts.length < 3 || parts.length > 4) return undefined;
    const [r, g, b] = parts.slice(0, 3).map(Number);
    if (![r, g, b].every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) return undefined;
    const a = parts[3] === undefined ? 1 : parts[3].endsWith('%') ? Number(parts[3].slice(0, -1)) / 100 : Number(parts[3]);
    if (a === 0) return 'transparent';
    if (a !== 1) return undefined;
    return [r, g, b];
  }
  return NAMED[s];
}

/** A background layer: its colour and whether an image covers it. */
interface Layer {
  color: unknown;
  image?: unknown;
}

const hasImage = (v: unknown) => typeof v === 'string' && v.trim() !== '' && v.trim().toLowerCase() !== 'none';

/** The nearest opaque background going out through the layers, or undefined when it cannot be judged. */
function background(layers: Layer[]): Rgb | undefined {
  for (const l of layers) {
    if (hasImage(l.image)) return undefined;
    const c = parseColor(l.color);
    if (c === undefined) return undefined;
    if (c !== 'transparent') return c;
  }
  return [255, 255, 255]; // a mail client's own background
}

function px(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const m = /^([\d.]+)(px)?$/.exec(v.trim());
  if (m) return Number(m[1]);
  const pt = /^([\d.]+)pt$/.exec(v.trim());
  return pt ? (Number(pt[1]) * 4) / 3 : undefined;
}

function isBold(v: unknown): boolean {
  if (typeof v === 'number') return v >= 700;
  return typeof v === 'string' && (v.trim() === 'bold' || v.trim() === 'bolder' || Number(v) >= 700);
}

const hex = (c: Rgb) => '#' + c.map((n) => n.toString(16).padStart(2, '0')).join('').toUpperCase();

/** The kinds with text, and where their colour, size and own background are. */
const TEXT_KINDS: Record<string, { style: string; own?: 'content' | 'descriptor' }> = {
  paragraph: { style: 'paragraph.style' },
  text: { style: 'text.style' },
  list: { style: 'list.style' },
  heading: { style: 'heading.style' },
  button: { style: 'button.style', own: 'content' },
  table: { style: 'table.style', own: 'content' },
  menu: { style: 'descriptor.style' },
  icons: { style: 'descriptor.style' },
};

export function checkContrast(doc: unknown): Finding[] {
  const out: Finding[] = [];
  const page = isRecord(doc) && isRecord(doc.page) ? doc.page : undefined;
  const body = page && isRecord(page.body) ? page.body : undefined;
  const bodyContent = body && isRecord(body.content) ? body.content : undefined;
  const bodyContainer = body && isRecord(body.container) ? body.container : undefined;
  const bodyText = resolveNode('page.body.content.style', bodyContent?.style).color;
  const message = resolveNode('page.body.content.computedStyle', bodyContent?.computedStyle).messageBackgroundColor;
  const outer = bodyContainer && isRecord(bodyContainer.style) ? bodyContainer.style : {};
  const outerStyle = resolveNode('page.body.container.style', outer);

  eachModule(doc, ({ module, pointer, uuid, row, column }) => {
    const kind = kindOfType(module.type);
    if (kind === undefined || !Object.hasOwn(TEXT_KINDS, kind)) return;
    const t = TEXT_KINDS[kind];
    const c = moduleContent(kind, module.descriptor);
    const descriptor = isRecord(module.descriptor) ? module.descriptor : undefined;
    const [holder, styleKey] = t.style.startsWith('descriptor.') ? [descriptor, 'style'] : [c?.content, 'style'];
    if (!holder) return;
    const rawStyle = holder[styleKey];
    const style = resolveNode(t.style, rawStyle, kind);
    const rowContent = isRecord(row.content) ? row.content : {};
    const rowContentStyle = isRecord(rowContent.style) ? rowContent.style : {};
    const rowContainer = isRecord(row.container) ? row.container : {};
    const rowContainerStyle = isRecord(rowContainer.style) ? rowContainer.style : {};
    const columnStyle = isRecord(column.style) ? column.style : {};

    // Text colour: the module's, else the row's, else the body's.
    const textChain = [style.color, rowContentStyle.color, bodyText];
    let text: Rgb | undefined;
    for (const v of textChain) {
      const p = parseColor(v);
      if (p === undefined) break;
      if (p !== 'transparent') {
        text = p;
        break;
      }
    }
    if (!text) return;

    const layers: Layer[] = [];
    if (t.own === 'content') layers.push({ color: style['background-color'] });
    layers.push(
      { color: columnStyle['background-color'] },
      { color: rowContentStyle['background-color'], image: rowContentStyle['background-image'] },
      { color: rowContainerStyle['background-color'], image: rowContainerStyle['background-image'] },
      { color: message },
      { color: outerStyle['background-color'], image: outerStyle['background-image'] },
    );
    const bg = background(layers);
    if (!bg) return;

    const ratio = contrastRatio(text, bg);
    const size = px(style['font-size']);
    const large = size !== undefined && (size >= 24 || (size >= 18.66 && isBold(style['font-weight'] ?? (kind === 'heading' ? 700 : 400))));
    const min = large ? 3 : 4.5;
    if (ratio >= min) return;
    const stylePointer = t.style.startsWith('descriptor.') ? `${pointer}/descriptor/style` : `${pointer}/descriptor/${c!.key}/style`;
    const at = isRecord(rawStyle) && rawStyle.color !== undefined ? `${stylePointer}/color` : pointer;
    const r = Math.floor(ratio * 100) / 100;
    out.push(
      finding('low_contrast', at, uuid, `text ${hex(text)} on background ${hex(bg)} has contrast ${r}:1, under WCAG AA's ${min}:1`, {
        text: hex(text),
        background: hex(bg),
        ratio: r,
        minimum: min,
      }),
    );
  });
  return out;
}
