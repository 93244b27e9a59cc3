import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCodeTables, withErrorTables } from '../errors/doc.js';
import { isMain } from './main.js';
import { projectRoot } from './paths.js';

/**
 * Writes the error catalog's tables into docs/api-conventions.md (`--write`), or prints them.
 * The tables come from errors/doc.ts; test/error-catalog.test.ts checks the document is current.
 */
export const ERROR_CODES_DOC = join(projectRoot, 'docs', 'api-conventions.md');

if (isMain(import.meta.url)) {
  if (process.argv.includes('--write')) writeFileSync(ERROR_CODES_DOC, withErrorTables(readFileSync(ERROR_CODES_DOC, 'utf8')));
  else process.stdout.write(errorCodeTables() + '\n');
}
