import type { Finding } from '../findings.js';
import { isRecord } from '../format/nodes.js';
import { finding } from './finding.js';
import { walkDocument } from './walk.js';

/**
 * Column shares: each row's grid-columns should add up to 12. A row whose shares do not, or a
 * column without one, is rendered anyway (format/nodes.ts columnWidths: proportionally), with a
 * warning, because the designer probably meant something else.
 */
export function checkGrid(doc: unknown): Finding[] {
  const out: Finding[] = [];
  walkDocument(doc, {
    node({ name, kind, value, pointer, uuid }) {
      if (name !== 'row' || kind !== undefined || !Array.isArray(value.columns)) return;
      const columns = value.columns.filter(isRecord);
      if (columns.length === 0) return;
      let sum = 0;
      let missing = false;
      value.columns.forEach((c, i) => {
        if (!isRecord(c)) return;
        const g = c['grid-columns'];
        if (typeof g === 'number') {
          sum += g;
        } else if (g === undefined || g === null) {
          missing = true;
          const cu = typeof c.uuid === 'string' && c.uuid !== '' ? c.uuid : uuid;
          out.push(finding('grid_columns_missing', `${pointer}/columns/${i}`, cu, 'column without grid-columns: it takes an equal part of the row'));
        }
      });
      if (!missing && sum !== 12) {
        out.push(finding('grid_columns_sum', `${pointer}/columns`, uuid, `the row's grid-columns add up to ${sum}, not 12: widths are applied proportionally`, { sum }));
      }
    },
  });
  return out;
}
