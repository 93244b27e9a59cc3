import { join } from 'node:path';
import { type GeneratedSection, generatedPart, writeOrPrint } from '../config/generated-section.js';
import { isMain } from '../config/is-main.js';
import { projectRoot } from '../config/paths.js';
import { ERROR_CATALOG, FIELD_ERROR_CATALOG, NOT_FOUND_RESOURCES, type CatalogEntry } from './catalog.js';

/**
 * docs/api-conventions.md's tables of error codes, generated from the catalog (errors/catalog.ts)
 * so the two cannot drift: `node dist/errors/doc.js --write` rewrites the part between
 * the markers, and test/error-catalog.test.ts fails when the document differs from this.
 */
export const ERROR_CODES_DOC: GeneratedSection = {
  file: join(projectRoot, 'docs', 'api-conventions.md'),
  begin: '<!-- generated from errors/catalog.ts by `node dist/errors/doc.js --write`: edit the catalog, not these tables -->',
  end: '<!-- end of the generated error tables -->',
};

const cell = (text: string) => text.replace(/\|/g, '\\|');

const notFoundCodes = new Set(Object.keys(NOT_FOUND_RESOURCES).map((r) => `${r}_not_found`));

function row(code: string, e: CatalogEntry): string {
  const note = e.cli ? ' (CLI only)' : e.notEmitted ? ` (never answered here: ${e.notEmitted})` : '';
  return `| ${e.status} | \`${code}\` | ${e.title} | ${cell(e.where + note)} |`;
}

/** The problem codes by status (then code), the <resource>_not_found codes as one row, then the errors[] codes. */
export function errorCodeTables(): string {
  const entries = Object.entries(ERROR_CATALOG).sort(([a, x], [b, y]) => x.status - y.status || a.localeCompare(b));
  const rows: string[] = [];
  let notFoundDone = false;
  for (const [code, e] of entries) {
    if (!notFoundCodes.has(code)) rows.push(row(code, e));
    else if (!notFoundDone) {
      notFoundDone = true;
      const resources = Object.keys(NOT_FOUND_RESOURCES).map((r) => `\`${r}\``).join(', ');
      rows.push(`| 404 | \`<resource>_not_found\` | ${e.title} | spec: Errors > Error list; resources: ${resources} |`);
    }
  }
  const fieldRows = Object.entries(FIELD_ERROR_CATALOG)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, where]) => `| \`${code}\` | ${cell(where)} |`);
  return [
    'Problem codes (the `code` of a problem object, and of a CLI refusal):',
    '',
    '| status | code | title | where it is named |',
    '|---|---|---|---|',
    ...rows,
    '',
    'Codes of a 422\'s `errors[]` items:',
    '',
    '| code | where it is named |',
    '|---|---|',
    ...fieldRows,
  ].join('\n');
}

/** The generated part of docs/api-conventions.md's text, or undefined without the markers. */
export const generatedErrorPart = (doc: string) => generatedPart(ERROR_CODES_DOC, doc);

if (isMain(import.meta.url)) writeOrPrint(ERROR_CODES_DOC, errorCodeTables());
