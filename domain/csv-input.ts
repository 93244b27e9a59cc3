import { parse, type Parser } from 'csv-parse';
import { Transform } from 'node:stream';
import { AppError } from './errors.js';

/**
 * Reading CSV files a person uploads (dataset imports, CSV lists): the one parser setup and the
 * pieces around it both use. UTF-8, comma-separated, RFC 4180 quoting; a leading BOM (what
 * spreadsheets write) is dropped; blank lines are not rows; a row may have fewer or more cells
 * than the header (the caller decides what that means).
 */
export function csvParser(): Parser {
  return parse({ bom: true, relax_column_count: true, skip_empty_lines: true });
}

/** csv-parse's own errors (an unclosed quote, a quote inside an unquoted field) as 400 `code`, saying where. */
export function asCsvError(err: unknown, code: string): unknown {
  const c = (err as { code?: string }).code;
  return typeof c === 'string' && c.startsWith('CSV_') ? new AppError(400, code, `the file is not valid CSV: ${(err as Error).message}`) : err;
}

/** Counts the bytes that pass (a progress bar's measure), passing them on untouched. */
export function byteCounter(onProgress?: (bytes: number) => void): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      onProgress?.(bytes);
      done(null, chunk);
    },
  });
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIALS = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * A field for COPY ... FROM STDIN in its text format (tab-separated): backslash, tab, newline and
 * carriage return escaped. The text format because most fields need nothing, which one test
 * finds (a JSON document always holds quotes, which the CSV format would have to double).
 */
export function copyField(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!) : text;
}
