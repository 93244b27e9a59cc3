import { ERROR_CATALOG, FIELD_ERROR_CATALOG, NOT_FOUND_RESOURCES, type CatalogEntry } from './catalog.js';

/**
 * docs/api-conventions.md's tables of error codes, generated from the catalog (errors/catalog.ts)
 * so the two cannot drift: `node dist/runtime/error-doc.js --write` rewrites the part between
 * the markers, and test/error-catalog.test.ts fails when the document differs from this.
 */
export const ERROR_DOC_BEGIN = '<!-- generated from errors/catalog.ts by `node dist/runtime/error-doc.js --write`: edit the catalog, not these tables -->';
export const ERROR_DOC_END = '<!-- end of the generated error tables -->';

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

/** The generated part of a document's text (between the markers), or undefined without them. */
export function generatedErrorPart(doc: string): string | undefined {
  const start = doc.indexOf(ERROR_DOC_BEGIN);
  const end = doc.indexOf(ERROR_DOC_END);
  if (start === -1 || end === -1 || end < start) return undefined;
  return doc.slice(start + ERROR_DOC_BEGIN.length, end).trim();
}

/** The document with its generated part replaced by the current tables. */
export function withErrorTables(doc: string): string {
  const start = doc.indexOf(ERROR_DOC_BEGIN);
  const end = doc.indexOf(ERROR_DOC_END);
  if (start === -1 || end === -1 || end < start) throw new Error('the document lacks the markers of the generated error tables');
  return `${doc.slice(0, start + ERROR_DOC_BEGIN.length)}\n${errorCodeTables()}\n${doc.slice(end)}`;
}
