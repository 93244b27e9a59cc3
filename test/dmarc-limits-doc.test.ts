import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../config/paths.js';
import { DMARC_LIMITS } from '../engines/dmarc/limits.js';

/**
 * docs/security.md's Limits table keeps up with engines/dmarc/limits.ts (issue 39): each DMARC
 * limit has its row, naming it and its value as the code has it, so a limit changed or added in
 * the code without the page fails here.
 */
const doc = readFileSync(join(projectRoot, 'docs', 'security.md'), 'utf8');
const limits = doc.slice(doc.indexOf('\n## Limits'), doc.indexOf('\n## ', doc.indexOf('\n## Limits') + 1));
const rows = limits.split('\n').filter((l) => l.startsWith('| '));

/** How the table writes a value: 64 MiB, 200×, 100,000. */
const shown = (key: keyof typeof DMARC_LIMITS, n: number): string => {
  if (key === 'maxXmlBytes') return `${n / 1024 / 1024} MiB`;
  if (key === 'maxCompressionRatio') return `${n}×`;
  return n.toLocaleString('en-US');
};

t.test('every DMARC limit has its row in docs/security.md, with the value the code has', async (t) => {
  t.ok(rows.length > 10, 'the Limits table was found');
  for (const [key, value] of Object.entries(DMARC_LIMITS) as Array<[keyof typeof DMARC_LIMITS, number]>) {
    const row = rows.find((r) => r.includes(`\`${key}\``) || r.includes(`DMARC_LIMITS.${key}\``));
    if (!t.ok(row, `a row names ${key}`)) continue;
    const cells = row!.split(' | ');
    t.ok(cells[1]?.startsWith(shown(key, value)), `${key}: ${shown(key, value)} (the row says ${JSON.stringify(cells[1])})`);
  }
});

t.test('the DMARC refusals have their rows: DOCTYPE/ENTITY, encoding, garbage, another domain', async (t) => {
  for (const reason of ['dtd_forbidden', 'invalid_encoding', 'bad_archive', 'invalid_xml', 'not_a_report', 'missing_field', 'invalid_value', '550 5.7.1']) {
    t.ok(rows.some((r) => r.includes(reason)), reason);
  }
});
