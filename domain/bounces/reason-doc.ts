import { join } from 'node:path';
import { type GeneratedSection, generatedPart, writeOrPrint } from '../../config/generated-section.js';
import { isMain } from '../../config/is-main.js';
import { projectRoot } from '../../config/paths.js';
import { BOUNCE_REASONS } from '../../engines/bounces/reason-names.js';
import { STATUS_NAME } from '../../engines/bounces/reason.js';
import { actionOf, REASON_TABLE } from '../../engines/bounces/reason-table.js';

/**
 * docs/bounces.md's reason table, generated from the table the classifier reads
 * (engines/bounces/reason-table.ts) and its status names (engines/bounces/reason.ts):
 * `node dist/domain/bounces/reason-doc.js --write` rewrites the part between the markers, and
 * test/bounce-classifier.test.ts fails when the document differs from this.
 */
export const REASONS_DOC: GeneratedSection = {
  file: join(projectRoot, 'docs', 'bounces.md'),
  begin: '<!-- generated from engines/bounces/reason-table.ts by `node dist/domain/bounces/reason-doc.js --write`: edit the table, not this -->',
  end: '<!-- end of the generated reason table -->',
};

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** Status codes that name each reason by themselves, in numeric order. */
function statusesOf(reason: string): string {
  const codes = Object.entries(STATUS_NAME)
    .filter(([, r]) => r === reason)
    .map(([code]) => code)
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return codes.map((c) => `\`${c}\``).join(', ');
}

export function reasonTable(): string {
  const rows = BOUNCE_REASONS.map((reason) => {
    const row = REASON_TABLE[reason];
    return `| \`${reason}\` | ${cell(row.meaning)} | ${row.verdict} | ${cell(actionOf(row))} | ${statusesOf(reason)} |`;
  });
  return ['| reason | meaning | hard or soft | what Cartero does | statuses that name it alone |', '|---|---|---|---|---|', ...rows].join('\n');
}

export const generatedReasonPart = (doc: string) => generatedPart(REASONS_DOC, doc);

if (isMain(import.meta.url)) writeOrPrint(REASONS_DOC, reasonTable());
