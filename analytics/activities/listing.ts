import type { ClickHouseClient } from '@clickhouse/client';
import type { Page, PageRequest } from '../../domain/pagination.js';
import { toPage, window } from '../../domain/pagination.js';
import type { PageWindow } from './filters.js';
import { ACTIVITY_SETTINGS, type ActivityQuery } from './query.js';
import { checkRows } from './rows.js';

/**
 * Settings of a listing's page query (not of counts or exports): without them ClickHouse 26.7
 * buffers blocks from every part before a read in key order stops early (docs/analytics.md,
 * "How the listings are built").
 */
export const PAGE_SETTINGS = {
  read_in_order_use_buffering: 0,
  max_block_size: '8192',
} as const;

/** A count for total_items: one number, `{name:Type}` parameters like its listing. */
export interface CountQuery {
  name: string;
  sql: string;
  params: Record<string, unknown>;
}

const COUNT_ROW = [{ name: 'n', kind: 'number' }] as const;

/**
 * Run a listing: its query with the page window of `req` (one row more than the page, so has_more
 * is exact without a count) and, where the listing has one, its count alongside. Every row is
 * checked against the query's row shape before it is returned (rows.ts).
 */
export async function fetchPage(
  ch: ClickHouseClient,
  build: (page: PageWindow) => ActivityQuery,
  req: PageRequest,
  count?: CountQuery,
): Promise<Page<Record<string, unknown>>> {
  const [rows, total] = await Promise.all([
    readPage(ch, build(window(req))),
    count
      ? ch
          .query({ query: count.sql, query_params: count.params, format: 'JSONEachRow', clickhouse_settings: { ...ACTIVITY_SETTINGS, log_comment: count.name } })
          .then((rs) => rs.json<unknown>())
          .then((r) => Number(checkRows({ name: count.name, columns: COUNT_ROW }, r)[0]?.n ?? 0))
      : Promise.resolve(null),
  ]);
  return toPage(rows, req, total);
}

/**
 * A page query's rows as the listing answers them: read with PAGE_SETTINGS, checked against the
 * query's row shape, then finished by its follow-up read where it has one (ActivityQuery.settle).
 */
export async function readPage(ch: ClickHouseClient, q: ActivityQuery): Promise<Array<Record<string, unknown>>> {
  const rs = await ch.query({ query: q.sql, query_params: q.params, format: 'JSONEachRow', clickhouse_settings: { ...ACTIVITY_SETTINGS, ...PAGE_SETTINGS, log_comment: q.name } });
  const rows = checkRows(q, await rs.json<unknown>());
  return q.settle ? q.settle(ch, rows) : rows;
}
