import type { QueryConfig } from 'pg';
import type { Client } from '../sql/pool.js';

/** Shared listing envelope (spec: Collection envelope). */
export interface PageRequest {
  page: number;
  page_size: number;
}

export interface Pagination {
  page: number;
  page_size: number;
  has_more: boolean;
  total_items: number | null;
  total_pages: number | null;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

/** LIMIT/OFFSET that fetch one extra row, so has_more is exact without a count. */
export function window(req: PageRequest): { limit: number; offset: number } {
  return { limit: req.page_size + 1, offset: (req.page - 1) * req.page_size };
}

/** Build the envelope from rows fetched with window(); total is null where the listing has none. */
export function toPage<T>(rows: T[], req: PageRequest, total: number | null): Page<T> {
  const has_more = rows.length > req.page_size;
  return {
    data: has_more ? rows.slice(0, req.page_size) : rows,
    pagination: {
      page: req.page,
      page_size: req.page_size,
      has_more,
      total_items: total,
      total_pages: total === null ? null : Math.ceil(total / req.page_size),
    },
  };
}

/**
 * The envelope from rows fetched with window() whose query also selects
 * `count(*) OVER ()::int AS total_count`: the count of the filtered rows before LIMIT/OFFSET, so
 * the listing and its total_items are one statement instead of two. A page past the end has no
 * row to carry the count: only then does `countPastEnd` run.
 */
export async function toCountedPage<T>(
  rows: Array<T & { total_count: number }>,
  req: PageRequest,
  countPastEnd: () => Promise<number>,
): Promise<Page<T>> {
  const total = rows[0] ? rows[0].total_count : await countPastEnd();
  return toPage(
    rows.map(({ total_count: _, ...row }) => row as T),
    req,
    total,
  );
}

/**
 * The `countPastEnd` of most listings: their filter's count, `count` being a SELECT
 * count(*)::int AS n (its text with `values`, or a named statement), run on the listing's client.
 */
export function countWith(c: Client, count: string | QueryConfig, values: unknown[] = []): () => Promise<number> {
  return async () => (await (typeof count === 'string' ? c.query<{ n: number }>(count, values) : c.query<{ n: number }>(count))).rows[0]!.n;
}
