import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { ClickHouseSettings } from '@clickhouse/client';
import type { Logger } from 'pino';
import { ACTIVITY_SETTINGS } from '../activities/query.js';
import type { ActivityQuery } from '../activities/query.js';
import { ClickHouseTimeout, type ClickHouseClient } from '../client.js';
import { ClickHouseExceptionTrap } from './exception-trap.js';
import { formulaGuardSql } from '../../engines/csv/formula-guard.js';

/**
 * Streamed exports of an activity query (sent, opens, clicks, unopened). ClickHouse runs the
 * query, applies the formula guard (CSV) and formats the bytes; Node pipes those bytes from
 * ClickHouse's HTTP response to the client's socket with back-pressure (stream.pipeline), so
 * memory does not grow with the row count and a slow client slows the query down instead of
 * filling the web's heap. Measured on these machines (DESIGN.md): ClickHouse formatting piped
 * through Node runs at ~6x the rate of rows parsed and re-serialised by Node.
 */

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Settings of every export request (ClickHouse HTTP settings, sent as URL parameters). */
const BASE_SETTINGS: ClickHouseSettings = {
  // The listings' own settings: DateTime64(3) as 2026-11-22T10:00:00.120Z (the JSON API's
  // date-time, JS toISOString) and 64-bit integers as numbers.
  ...ACTIVITY_SETTINGS,
  // Exports only read. And only a read-only query polls its HTTP connection while it has no
  // output yet (an aggregation, a sort): with both, a client that goes away cancels the query
  // at once instead of at its first write (verified on ClickHouse 26.7: without readonly, a
  // query sorting or aggregating runs on after its client left). 2 = read-only, but settings
  // may still be changed, which the settings below need.
  readonly: '2',
  cancel_http_readonly_queries_on_client_close: 1,
  // A datetime column the listing's SQL already renders as an ISO string parses back too.
  cast_string_to_date_time_mode: 'best_effort',
};

const FORMAT_SETTINGS: Record<ExportFormat, ClickHouseSettings> = {
  csv: {
    // NULL as an empty cell (ClickHouse's default is \N), rows ended by CRLF (RFC 4180).
    format_csv_null_representation: '',
    output_format_csv_crlf_end_of_line: 1,
  },
  json: {
    // One JSON array of row objects, `[` first and `]` last, still written row by row.
    output_format_json_array_of_rows: 1,
    // As the listing's JSON: decimals as numbers, '/' unescaped, and invalid UTF-8 replaced
    // rather than making the whole document invalid.
    output_format_json_quote_decimals: 0,
    output_format_json_escape_forward_slashes: 0,
    output_format_json_validate_utf8: 1,
  },
};

/** A backquoted ClickHouse identifier. */
function identifier(name: string): string {
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

/**
 * The query's columns named by `names`, in that order (all of them, in the query's order, when
 * `names` is undefined). A name the query does not have is a programming error.
 */
export function pickColumns(query: ActivityQuery, names?: readonly string[]): ActivityQuery['columns'] {
  if (!names) return query.columns;
  return names.map((name) => {
    const column = query.columns.find((c) => c.name === name);
    if (!column) throw new Error(`${query.name} has no column ${name}`);
    return column;
  });
}

/**
 * The export's SELECT: the activity query as a subquery (its ORDER BY is kept: no later step
 * sorts or aggregates), with the columns `names` (default all), each shaped for the format.
 * Text columns of a CSV go through the formula guard; datetime columns become
 * DateTime64(3, 'UTC') rendered as ISO 8601 by the settings above (CSV and JSON alike); numbers
 * pass as they are.
 */
export function exportSql(query: ActivityQuery, format: ExportFormat, names?: readonly string[]): string {
  const inner = query.sql.trim().replace(/;+\s*$/, '');
  const columns = pickColumns(query, names).map(({ name, kind }) => {
    const source = `src.${identifier(name)}`;
    const value =
      kind === 'datetime' ? `toDateTime64(${source}, 3, 'UTC')` : kind === 'text' && format === 'csv' ? formulaGuardSql(source) : source;
    return `${value} AS ${identifier(name)}`;
  });
  return `SELECT ${columns.join(',\n       ')}\nFROM (\n${inner}\n) AS src\nFORMAT ${format === 'csv' ? 'CSV' : 'JSONEachRow'}`;
}

/**
 * The ClickHouse request of an export, as `exec` takes it: its SQL, parameters and settings. The
 * bytes of its response are the export's body (after the BOM and header row of a CSV).
 */
export function exportRequest(
  query: ActivityQuery,
  format: ExportFormat,
  names?: readonly string[],
): { query: string; query_params: Record<string, unknown>; clickhouse_settings: ClickHouseSettings } {
  return {
    query: exportSql(query, format, names),
    query_params: query.params,
    clickhouse_settings: { ...BASE_SETTINGS, ...FORMAT_SETTINGS[format], log_comment: `export ${query.name}` },
  };
}

const headerLines = new Map<string, Buffer>();

/**
 * The CSV header row for these column names, guarded like any text cell and quoted by
 * ClickHouse's own CSV writer (the same code path as the rows). Column sets are fixed per
 * listing, so each is asked of ClickHouse once per process.
 */
export async function csvHeaderLine(ch: ClickHouseClient, names: readonly string[], signal?: AbortSignal): Promise<Buffer> {
  const key = JSON.stringify(names);
  const cached = headerLines.get(key);
  if (cached) return cached;
  const params = Object.fromEntries(names.map((n, i) => [`h${i}`, n]));
  const result = await ch.exec({
    query: `SELECT ${names.map((_, i) => `${formulaGuardSql(`{h${i}:String}`)} AS h${i}`).join(', ')} FORMAT CSV`,
    query_params: params,
    clickhouse_settings: { ...BASE_SETTINGS, ...FORMAT_SETTINGS.csv, log_comment: 'export csv header' },
    ...(signal ? { abort_signal: signal } : {}),
  });
  const chunks: Buffer[] = [];
  for await (const chunk of result.stream as Readable) chunks.push(chunk as Buffer);
  const line = Buffer.concat(chunks);
  headerLines.set(key, line);
  return line;
}

export interface ExportTarget {
  format: ExportFormat;
  /** File name without extension, e.g. 'opens'; the date of the export (UTC) is appended. */
  basename: string;
  /** Tags the ClickHouse query id (system.processes, query_log) with the web request. */
  requestId: string;
  /** The columns to write, in order; default all the query's columns in the query's order. */
  columns?: readonly string[];
  logger: Logger;
  /**
   * ms from the start until ClickHouse's first byte (CLICKHOUSE_REQUEST_TIMEOUT_MS); past it the
   * export answers 503 instead of 200. Silence after the first byte is the client's own bound
   * (the web's export client: CLICKHOUSE_EXPORT_IDLE_TIMEOUT_MS).
   */
  firstByteMs?: number;
}

/** e.g. opens-20261122.csv */
export function exportFilename(basename: string, format: ExportFormat, now = new Date()): string {
  return `${basename}-${now.toISOString().slice(0, 10).replace(/-/g, '')}.${format}`;
}

/**
 * Streams the whole result of `query` to `res` as CSV (UTF-8 BOM, guarded header row, guarded
 * rows) or as a JSON array of the listing's rows.
 *
 * Failures before the first byte (ClickHouse unreachable, a query error, no byte within
 * target.firstByteMs) reject, so the route answers a problem object as usual: a router that
 * ends requests at 30 s (docs/operations.md, Bounded under a router) must see our status line
 * before it gives up. Once streaming has started the status is sent: a failure then destroys the
 * response (the client sees a truncated chunked download, never an error text inside the file)
 * and is logged, and the promise resolves. A client that disconnects aborts the ClickHouse
 * request, and the server cancels the query (see BASE_SETTINGS).
 */
export async function streamExport(ch: ClickHouseClient, query: ActivityQuery, res: ServerResponse, target: ExportTarget): Promise<void> {
  const { format } = target;
  const headers = {
    'Content-Type': CONTENT_TYPES[format],
    'Content-Disposition': `attachment; filename="${exportFilename(target.basename, format)}"`,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  };
  if (res.req?.method === 'HEAD') {
    res.writeHead(200, headers).end();
    return;
  }
  const columns = pickColumns(query, target.columns);

  const abort = new AbortController();
  const onClose = () => abort.abort();
  res.once('close', onClose);
  // One deadline for everything before the first byte (the CSV header's request included), not
  // one per request: the client's own timeout counts silence per request, which two requests
  // in a row could each nearly use up.
  let late = false;
  const firstByte =
    target.firstByteMs === undefined
      ? undefined
      : setTimeout(() => {
          late = true;
          abort.abort();
        }, target.firstByteMs);
  const queryId = `cartero-export-${target.requestId}-${randomUUID().slice(0, 8)}`;
  try {
    let header: Buffer | undefined;
    let result;
    try {
      header = format === 'csv' ? await csvHeaderLine(ch, columns.map((c) => c.name), abort.signal) : undefined;
      result = await ch.exec({ ...exportRequest(query, format, target.columns), query_id: queryId, abort_signal: abort.signal });
      // The deadline fired as ClickHouse answered: its stream is already cut.
      if (late) {
        (result.stream as Readable).destroy();
        throw new Error('late');
      }
    } catch (err) {
      if (late) throw new ClickHouseTimeout(`ClickHouse sent no byte of the export within ${target.firstByteMs} ms (CLICKHOUSE_REQUEST_TIMEOUT_MS)`);
      if (abort.signal.aborted) return; // the client left before ClickHouse answered
      throw err;
    } finally {
      clearTimeout(firstByte);
    }
    const body = result.stream as Readable;
    const tag = result.response_headers['x-clickhouse-exception-tag'];

    const trap = typeof tag === 'string' && tag !== '' ? new ClickHouseExceptionTrap(tag) : undefined;

    res.writeHead(200, headers);
    if (header) res.write(Buffer.concat([BOM, header]));
    try {
      if (trap) await pipeline(body, trap, res);
      else await pipeline(body, res);
    } catch (err) {
      // pipeline has destroyed every stream: the response, and the request to ClickHouse.
      res.destroy();
      const log = { err, clickhouseError: trap?.failure, reqId: target.requestId, query: query.name, queryId };
      if (!trap?.failure && (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') {
        target.logger.info(log, 'export cancelled: the client disconnected');
      } else {
        target.logger.warn(log, 'export failed mid-stream');
      }
    }
  } finally {
    res.off('close', onClose);
    if (!res.writableFinished) abort.abort();
  }
}
