import { stringify, type Stringifier } from 'csv-stringify';
import { CsvError, parse, type Options, type Parser } from 'csv-parse';
import { once } from 'node:events';
import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CSV_LIMITS, type CsvLimits } from '../config/defaults.js';
import { formulaGuard } from '../engines/csv/formula-guard.js';
import { AppError } from './errors.js';

/**
 * Reading CSV files a person uploads (dataset imports, CSV lists): the one parser setup and the
 * pieces around it both use. UTF-8, comma-separated, RFC 4180 quoting; a leading BOM (what
 * spreadsheets write) is dropped; blank lines are not rows; a row may have fewer or more cells
 * than the header (the caller decides what that means).
 *
 * Cells are read as bytes and decoded here with a fatal UTF-8 decoder, so a cell that is not
 * UTF-8 (a Latin-1 byte, a surrogate encoded as CESU-8/WTF-8 such as ED A0 80, an overlong form)
 * is told apart instead of silently becoming U+FFFD; a cell holding NUL, which Postgres text and
 * jsonb cannot hold, is told apart too. Either makes the record `unreadable`, with the file line
 * it starts on, and the caller refuses it (a rejected row, or the whole file for a header).
 *
 * Two bounds keep a file's memory small whatever it holds (CSV_MAX_CELL_BYTES,
 * CSV_MAX_RECORD_BYTES, config/defaults.ts for why these sizes). A cell over its bound makes
 * the record unreadable too (`value_error.too_large`): its row is refused and the rest of the
 * file read. A record over its bound refuses the whole file (recordBound, ahead of the parser,
 * as the bytes arrive, so no more than the bound is ever held): no row a person writes is that
 * large, and the usual cause is an unclosed quote that swallows every row after it, which
 * reading on could only guess past.
 */

/** One record of the file. */
export interface CsvRecord {
  /** The cells as text; an unreadable cell with U+FFFD for its invalid bytes (what a rejects file can show). */
  cells: string[];
  /** The file line the record starts on (1 for the first; blank lines and a cell's line breaks counted). */
  line: number;
  /** Why the record cannot be read as text: the first such cell, by index. */
  unreadable?: { index: number; code: 'value_error.nul_character' | 'value_error.invalid_utf8' | 'value_error.too_large'; reason: string };
}

// fatal: invalid UTF-8 throws instead of becoming U+FFFD; ignoreBOM: a U+FEFF inside a cell is
// kept (the file's own BOM is dropped before parsing, by withoutBom).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LF = 0x0a;

function recordOf(raw: Buffer[], info: { lines: number }, maxCellBytes: number): CsvRecord {
  const cells: string[] = new Array(raw.length);
  let unreadable: CsvRecord['unreadable'];
  let breaks = 0;
  for (let i = 0; i < raw.length; i++) {
    const bytes = raw[i]!;
    for (let at = bytes.indexOf(LF); at !== -1; at = bytes.indexOf(LF, at + 1)) breaks++;
    if (bytes.length > maxCellBytes) {
      cells[i] = bytes.toString('utf8');
      unreadable ??= { index: i, code: 'value_error.too_large', reason: `has ${bytes.length} bytes, over the ${maxCellBytes} a cell may have (CSV_MAX_CELL_BYTES)` };
      continue;
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      cells[i] = bytes.toString('utf8');
      unreadable ??= { index: i, code: 'value_error.invalid_utf8', reason: 'is not valid UTF-8 text (save the file as UTF-8)' };
      continue;
    }
    if (text.includes('\0')) unreadable ??= { index: i, code: 'value_error.nul_character', reason: 'holds the NUL character (U+0000), which no value may hold' };
    cells[i] = text;
  }
  // csv-parse counts lines up to the record's end; a quoted cell's line breaks are inside it.
  const record: CsvRecord = { cells, line: info.lines - breaks };
  if (unreadable) record.unreadable = unreadable;
  return record;
}

/**
 * The parser: bytes in (through recordBound), CsvRecord out. csv-parse's own `bom` option would
 * switch it to decoding every cell itself (without telling invalid bytes apart), so the BOM goes
 * first (withoutBom).
 */
export function csvParser(limits: Pick<CsvLimits, 'cellBytes'> = CSV_LIMITS): Parser {
  const options: Options<CsvRecord, Buffer[]> = {
    bom: false,
    encoding: null,
    relax_column_count: true,
    skip_empty_lines: true,
    on_record: (raw, info) => recordOf(raw, info, limits.cellBytes),
  };
  // parse's overloads type records as string[] unless columns are given; these are CsvRecords.
  return parse(options as unknown as Options);
}

const QUOTE = 0x22;
const CR = 0x0d;

/**
 * Refuses a record longer than `maxBytes` as its bytes arrive, passing the chunks before the one
 * where a record goes over on untouched; goes between withoutBom and csvParser. csv-parse's own max_record_size cannot do it:
 * it adds up a record's cells only when they are strings, and cells are Buffers here (read as
 * bytes, decoded by recordOf), so it bounds one cell, not a record of many. A record ends at a
 * line break outside quotes; in RFC 4180 every quote toggles in and out of a quoted cell (an
 * escaped "" toggles twice, with no line break between), so counting quotes is enough to know
 * (a quote where the grammar allows none is csv-parse's error). Lines are counted by LF, as
 * csv-parse counts them in a file of LF or CRLF line ends.
 */
export function recordBound(maxBytes: number): Transform {
  let quoted = false;
  let length = 0;
  let line = 1;
  let startLine = 1;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        if (b === QUOTE) quoted = !quoted;
        else if (b === LF || b === CR) {
          if (b === LF) line++;
          if (!quoted) {
            length = 0;
            startLine = line;
            continue;
          }
        }
        if (++length > maxBytes) {
          // csv-parse's own error, so asCsvError words it as every other CSV fault (its options
          // serve only to decode Buffer contexts, and these are numbers).
          const options = {} as ConstructorParameters<typeof CsvError>[2];
          const err = new CsvError('CSV_MAX_RECORD_SIZE', `Max Record Size: a record over ${maxBytes} bytes starting at line ${startLine}`, options, { lines: startLine, max_record_size: maxBytes });
          return done(err);
        }
      }
      done(null, chunk);
    },
  });
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Drops a leading UTF-8 byte order mark, passing every other byte on untouched; goes right before csvParser. */
export function withoutBom(): Transform {
  // The first bytes, held while they may still be the start of a BOM; undefined once decided.
  let head: Buffer | undefined = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (!head) return done(null, chunk);
      const bytes = head.length ? Buffer.concat([head, chunk]) : chunk;
      if (bytes.length < BOM.length && BOM.subarray(0, bytes.length).equals(bytes)) {
        head = bytes;
        return done();
      }
      head = undefined;
      done(null, bytes.subarray(0, BOM.length).equals(BOM) ? bytes.subarray(BOM.length) : bytes);
    },
    flush(done) {
      done(null, head?.length ? head : undefined);
    },
  });
}

/**
 * Where refused rows go: CSV whose every text cell (and header) goes through the spec's
 * spreadsheet-formula guard, the one exports apply (engines/csv/formula-guard.ts): a
 * rejects file is opened in a spreadsheet to fix its rows, and its cells are the uploader's.
 */
export function rejectsCsv(): Stringifier {
  return stringify({ cast: { string: (text) => formulaGuard(text) } });
}

/** A refused row of an import or an upload, as its answer lists it and its rejects file has it. */
export interface CsvReject {
  /** The data row's number: 1 for the row after the header. */
  row: number;
  code: string;
  field: string | null;
  rule: string | null;
  detail: string;
}

/** How many refused rows an import's answer lists (all of them are in its rejects file). */
const FIRST_REJECTS = 10;

/**
 * The rows an import or an upload refuses: counted, the first FIRST_REJECTS kept for its answer,
 * and each written to the rejects file (row, code, field, rule, detail, then the row's own
 * cells) under the file's back-pressure.
 */
export class RejectLog {
  count = 0;
  readonly first: CsvReject[] = [];

  constructor(private readonly file: Stringifier) {}

  /** Records a refused row; `then` runs once the file takes more (at once, or when it drains), `failed` if it breaks meanwhile. */
  add(reject: CsvReject, cells: readonly string[], then: () => void, failed: (err: Error) => void): void {
    this.count++;
    if (this.first.length < FIRST_REJECTS) this.first.push(reject);
    if (this.file.write([reject.row, reject.code, reject.field ?? '', reject.rule ?? '', reject.detail, ...cells])) then();
    else once(this.file, 'drain').then(then, failed);
  }
}

/**
 * csv-parse's own errors (an unclosed quote, a quote inside an unquoted field) as 400 `code`,
 * saying what and on which line. All of them: some codes lack the CSV_ prefix
 * (INVALID_OPENING_QUOTE). Their message's first part names the fault; the rest can quote the
 * cell as a byte array (cells are read as bytes), which is no help to a person.
 */
export function asCsvError(err: unknown, code: 'dataset_import_csv_invalid' | 'list_import_csv_invalid'): unknown {
  if (!(err instanceof CsvError)) return err;
  const line = (err as CsvError & { lines?: number }).lines;
  if (err.code === 'CSV_MAX_RECORD_SIZE') {
    const max = (err as CsvError & { max_record_size?: number }).max_record_size;
    return new AppError(
      code,
      `the file is not valid CSV: the record starting at line ${line} is over ${max} bytes (CSV_MAX_RECORD_BYTES), ` +
        'most often an unclosed quote that runs on through the rows after it; nothing was imported',
    );
  }
  const what = err.message.split(':')[0]!.trim();
  return new AppError(code, `the file is not valid CSV: ${what}${line ? ` (line ${line})` : ''}`);
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

/**
 * An upload read the one way (dataset imports, list uploads): its bytes counted for progress,
 * the BOM dropped, each record bounded, parsed, checked by the transform `checkerOf` makes (given
 * the rejects file, which it writes refused rows to) and COPYed by `copy`. When this returns the
 * rejects file is complete in `source.rejects`; when it throws, the file is torn down and
 * csv-parse's own errors are the 400 `code`.
 */
export async function readUpload<C extends Transform>(
  source: { input: Readable; rejects: Writable; limits?: CsvLimits; onProgress?: (bytes: number) => void },
  code: 'dataset_import_csv_invalid' | 'list_import_csv_invalid',
  checkerOf: (rejects: Stringifier) => C,
  copy: Writable,
): Promise<C> {
  const rejects = rejectsCsv();
  const rejectsDone = pipeline(rejects, source.rejects);
  const checker = checkerOf(rejects);
  try {
    const limits = source.limits ?? CSV_LIMITS;
    await pipeline(source.input, byteCounter(source.onProgress), withoutBom(), recordBound(limits.recordBytes), csvParser(limits), checker, copy);
  } catch (err) {
    rejects.destroy();
    await rejectsDone.catch(() => {});
    throw asCsvError(err, code);
  }
  rejects.end();
  await rejectsDone;
  return checker;
}
