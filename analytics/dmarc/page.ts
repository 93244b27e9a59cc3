import type { ClickHouseClient } from '@clickhouse/client';
import { Ajv, type ValidateFunction } from 'ajv';
import { toPage, window, type Page, type PageRequest } from '../../domain/pagination.js';
import type { JsonSchema } from '../../domain/validation.js';
import { ACTIVITY_SETTINGS } from '../activities/query.js';
import { RowShapeMismatch } from '../activities/rows.js';

/**
 * How the DMARC listings read a page (reports.ts, sources.ts): their page query with the window
 * of the request (one row more than the page, so has_more is exact) and their count alongside,
 * each row checked against the query's row schema before it is shaped into the API's item. The
 * rows carry booleans and arrays, which the activity listings' column kinds
 * (analytics/activities/rows.ts) do not describe, hence a JSON Schema per query here; a row that
 * does not fit is the same RowShapeMismatch (a bug: 500, logged), never bad input.
 */
export interface DmarcQuery {
  /** For logs and ClickHouse's query log (log_comment), e.g. 'dmarc.sources'. */
  name: string;
  /** The SELECT with its ORDER BY, ending in ` LIMIT {page_limit:UInt32} OFFSET {page_offset:UInt64}`. */
  sql: string;
  params: Record<string, unknown>;
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });

/** A row schema compiled once, at module load. */
export function rowCheck(schema: JsonSchema): ValidateFunction {
  return ajv.compile(schema);
}

const COUNT_ROW = rowCheck({ type: 'object', additionalProperties: false, required: ['n'], properties: { n: { type: 'number' } } });

async function rows(ch: ClickHouseClient, q: DmarcQuery, check: ValidateFunction): Promise<Array<Record<string, unknown>>> {
  const rs = await ch.query({ query: q.sql, query_params: q.params, format: 'JSONEachRow', clickhouse_settings: { ...ACTIVITY_SETTINGS, log_comment: q.name } });
  const read = await rs.json<Record<string, unknown>>();
  read.forEach((row, i) => {
    if (!check(row)) throw new RowShapeMismatch(q.name, i, (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`));
  });
  return read;
}

/** One page of a listing: `page` read with the request's window, `count` for total_items, then each row shaped. */
export async function readPage<T>(
  ch: ClickHouseClient,
  req: PageRequest,
  page: { query: DmarcQuery; row: ValidateFunction; shape: (row: Record<string, unknown>) => T },
  count: DmarcQuery,
): Promise<Page<T>> {
  const { limit, offset } = window(req);
  const [found, total] = await Promise.all([
    rows(ch, { ...page.query, params: { ...page.query.params, page_limit: limit, page_offset: offset } }, page.row),
    rows(ch, count, COUNT_ROW).then((r) => Number(r[0]?.n ?? 0)),
  ]);
  return toPage(found.map(page.shape), req, total);
}
