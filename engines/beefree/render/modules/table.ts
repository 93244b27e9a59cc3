import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { cleanFragment } from '../fragment.js';
import { element, style } from '../markup.js';
import { arr, border, color, fontStack, length, obj, paddingAttributes, str, text, textAlign } from '../values.js';
import { lineHeight } from './typography.js';

/**
 * table -> mj-table, whose content is its rows: one <tr> of <th> per header row, one <tr> of
 * <td> per data row. The borders are drawn on the cells (the top and left ones on the first row
 * and column only), so adjacent cells never show a double line without border-collapse.
 */
/** On the cell MJML wraps the table in: how the text part finds data tables among layout tables. */
export const DATA_TABLE_CLASS = 'cartero-table';

export const table: ModuleBuilder = (m, lines) => {
  const s = resolveNode('table.style', m.content.style, 'table');
  const c = resolveNode('table.computedStyle', m.content.computedStyle, 'table');
  const linkColor = color(c.linkColor) ?? m.inherited.linkColor;
  const content = obj(m.content.content);
  const headers = arr(content.headers).map((r) => cellsOf(r));
  const rows = arr(content.rows).map((r) => cellsOf(r));
  const all = [...headers, ...rows];
  if (all.length === 0) return [];
  const columns = Math.max(...all.map((r) => r.length));
  const rawDir = str(obj(m.content.style).direction)?.toLowerCase();
  const dir = (rawDir === 'rtl' || rawDir === 'ltr') && rawDir !== m.inherited.dir ? rawDir : undefined;
  const trs = all.map((cells, r) => {
    const isHeader = r < headers.length;
    const dataIndex = r - headers.length;
    const background = isHeader
      ? color(c.headersBackgroundColor)
      : dataIndex % 2 === 1
        ? (color(c.alternateRowBackgroundColor) ?? color(s['background-color']))
        : color(s['background-color']);
    const tds = Array.from({ length: columns }, (_, col) =>
      element(
        isHeader ? 'th' : 'td',
        {
          style: style({
            padding: '10px',
            'background-color': background,
            'border-top': r === 0 ? border(s['border-top']) : undefined,
            'border-left': col === 0 ? border(s['border-left']) : undefined,
            'border-right': border(s['border-right']),
            'border-bottom': border(s['border-bottom']),
            'text-align': isHeader ? (textAlign(c.headersTextAlign) ?? textAlign(s['text-align'])) : textAlign(s['text-align']),
            'vertical-align': 'top',
            'word-break': 'break-word',
            direction: dir,
            ...(isHeader
              ? { color: color(c.headersColor), 'font-size': length(c.headersFontSize), 'font-weight': str(c.headersFontWeight) }
              : {}),
          }),
        },
        cleanFragment(cells[col] ?? '', { linkColor }),
      ),
    );
    return element('tr', {}, tds.join(''));
  });
  return [
    lines.leaf(
      'mj-table',
      {
        color: color(s.color) ?? m.inherited.color,
        'font-family': fontStack(s['font-family'], m.inherited.fontFamily),
        'font-size': length(s['font-size']),
        'font-weight': str(s['font-weight']),
        'line-height': lineHeight(s['line-height']),
        'table-layout': 'fixed',
        'css-class': DATA_TABLE_CLASS,
        width: '100%',
        ...paddingAttributes(m.style),
      },
      trs.join(''),
      m.origin,
    ),
  ];
};

function cellsOf(row: unknown): string[] {
  return arr(obj(row).cells).map((cell) => text(obj(cell).html));
}
