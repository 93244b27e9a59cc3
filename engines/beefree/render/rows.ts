import { columnWidths, kindOfType, moduleContent, resolveNode } from '../format/nodes.js';
import type { Inherited, ModuleInput } from './context.js';
import type { Lines, MjmlNode, Origin } from './mjml-tree.js';
import { MODULE_BUILDERS } from './modules/index.js';
import {
  arr,
  backgroundRepeat,
  backgroundUrl,
  borderAttributes,
  color,
  css,
  length,
  obj,
  paddingAttributes,
  paddings,
  pixels,
  str,
  type Json,
} from './values.js';
import { applyVisibility } from './visibility.js';

/** What a row needs from the body. */
export interface BodyContext {
  /** mj-body width in pixels. */
  width: number;
  /** The message area's background (messageBackgroundColor), under rows whose content is transparent. */
  messageBackground: string | undefined;
  inherited: Inherited;
}

/**
 * A row -> an mj-section (its content: background, padding, borders, radius), inside a
 * full-width mj-wrapper when the row has a band behind it (row.container background). Columns
 * stack on narrow screens (MJML's default); `rowColStackOnMobile: false` puts them in an mj-group,
 * which never stacks; `rowReverseColStackOnMobile` writes them in reverse order in a section of
 * direction rtl, so desktop shows them in the document's order and the stack starts with the last.
 */
export function buildRow(row: unknown, index: number, body: BodyContext, lines: Lines): MjmlNode[] {
  const r = obj(row);
  const pointer = `/page/rows/${index}`;
  const origin: Origin = { uuid: str(r.uuid) ?? null, pointer };
  const content = obj(r.content);
  const style = resolveNode('row.content.style', content.style);
  const computed = resolveNode('row.content.computedStyle', content.computedStyle);
  const band = resolveNode('row.container.style', obj(r.container).style);

  const stack = computed.rowColStackOnMobile !== false;
  const reverse = stack && computed.rowReverseColStackOnMobile === true;
  const verticalAlign = str(computed.verticalAlign);

  const rowPadding = paddings(style);
  const boxWidth = Math.max(1, body.width - (pixels(rowPadding.left) ?? 0) - (pixels(rowPadding.right) ?? 0));
  const inherited: Inherited = { ...body.inherited, color: color(style.color) ?? body.inherited.color };

  const rawColumns = arr(r.columns);
  const widths = columnWidths(rawColumns);
  let columns = rawColumns.map((col, i) =>
    buildColumn(col, widths[i]!, boxWidth, verticalAlign, inherited, { uuid: str(obj(col).uuid) ?? origin.uuid, pointer: `${pointer}/columns/${i}` }, lines),
  );
  if (reverse) columns = columns.reverse();

  const section = lines.node(
    'mj-section',
    {
      'background-color': color(style['background-color']) ?? body.messageBackground,
      ...background(style),
      ...paddingAttributes(style),
      ...borderAttributes(style),
      'border-radius': length(style['border-radius']),
      direction: reverse ? 'rtl' : undefined,
      'text-align': 'center',
    },
    stack ? columns : [lines.node('mj-group', { width: '100%', 'vertical-align': verticalAlign }, columns, origin)],
    origin,
  );

  const bandColor = color(band['background-color']);
  const bandImage = background(band);
  const outer =
    bandColor === undefined && bandImage['background-url'] === undefined
      ? section
      : lines.node('mj-wrapper', { 'full-width': 'full-width', 'background-color': bandColor, ...bandImage, padding: '0px' }, [section], origin);

  return applyVisibility([outer], { mobile: computed.hideContentOnMobile === true, desktop: computed.hideContentOnDesktop === true }, lines, origin);
}

function buildColumn(
  column: unknown,
  widthPercent: number,
  boxWidth: number,
  verticalAlign: string | undefined,
  inherited: Inherited,
  origin: Origin,
  lines: Lines,
): MjmlNode {
  const c = obj(column);
  const style = resolveNode('column.style', c.style);
  const pad = paddings(style);
  const columnWidth = Math.max(1, (boxWidth * widthPercent) / 100 - (pixels(pad.left) ?? 0) - (pixels(pad.right) ?? 0));
  const children = arr(c.modules).flatMap((m, i) => buildModule(m, { uuid: origin.uuid, pointer: `${origin.pointer}/modules/${i}` }, columnWidth, inherited, lines));
  return lines.node(
    'mj-column',
    {
      width: percent(widthPercent),
      'background-color': color(style['background-color']),
      ...paddingAttributes(style),
      ...borderAttributes(style),
      'border-radius': length(style['border-radius']),
      'vertical-align': verticalAlign,
      direction: inherited.dir,
    },
    children,
    origin,
  );
}

/**
 * A module -> its kind's builder. Kinds without a builder (empty, the unsupported ones the
 * checks reject) and modules hidden from HTML render nothing.
 */
function buildModule(module: unknown, parent: Origin, columnWidth: number, inherited: Inherited, lines: Lines): MjmlNode[] {
  const m = obj(module);
  const kind = kindOfType(m.type);
  const builder = kind === undefined ? undefined : MODULE_BUILDERS[kind];
  if (kind === undefined || builder === undefined) return [];
  const descriptor = obj(m.descriptor);
  const computed = resolveNode('descriptor.computedStyle', descriptor.computedStyle, kind);
  if (computed.hideContentOnHtml === true) return [];
  const origin: Origin = { uuid: str(m.uuid) ?? parent.uuid, pointer: parent.pointer };
  const input: ModuleInput = {
    kind,
    content: moduleContent(kind, descriptor)?.content ?? {},
    descriptor,
    style: resolveNode('descriptor.style', descriptor.style, kind),
    computed,
    origin,
    columnWidth,
    inherited,
  };
  return applyVisibility(
    builder(input, lines),
    { mobile: computed.hideContentOnMobile === true, desktop: computed.hideContentOnDesktop === true },
    lines,
    origin,
  );
}

/** MJML's background attributes of a style with a background image. */
function background(style: Json): Record<string, string | undefined> {
  const url = backgroundUrl(style['background-image']);
  if (url === undefined) return {};
  return {
    'background-url': url,
    'background-repeat': backgroundRepeat(style['background-repeat']),
    'background-position': css(style, 'background-position'),
    'background-size': css(style, 'background-size'),
  };
}

/** `33.3333%`: four decimals are far below a pixel at any mail width. */
function percent(value: number): string {
  return `${Number(value.toFixed(4))}%`;
}
