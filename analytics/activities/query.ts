import type { ClickHouseClient } from '@clickhouse/client';
/**
 * One activity query (sent, opens, clicks, unopened; per group_by), as both its listing and its
 * export use it: a ClickHouse SELECT with `{name:Type}` parameters, its ORDER BY included and no
 * LIMIT, whose result columns are exactly `columns`, in the spec's order for that listing. The
 * listing adds LIMIT/OFFSET; the export streams the whole result (analytics/export/stream.ts).
 */
export interface ActivityQuery {
  /** Named for logs and ClickHouse's query log (log_comment), e.g. 'opens.group_by_mail_id'. */
  name: string;
  sql: string;
  params: Record<string, unknown>;
  /** Result columns in order, and whether each is text (the CSV formula guard applies) or not. */
  columns: ReadonlyArray<ResultColumn>;
  /**
   * A page only: finishes the rows read (checked against `columns`) with a follow-up read, and
   * leaves out the columns that served it; listing.ts's fetchPage calls it. The group_by=msg_id
   * pages use it for their few messages whose events were read in copies (events-by-message.ts).
   */
  settle?: (ch: ClickHouseClient, rows: Array<Record<string, unknown>>) => Promise<Array<Record<string, unknown>>>;
}

export interface ResultColumn {
  name: string;
  kind: 'text' | 'number' | 'datetime';
  /** The SQL may yield NULL here (a Nullable column, an aggregate of one); else never. */
  nullable?: true;
  /**
   * Cartero's addition about machine-made events (the flag, the human counts: docs/tracking.md),
   * beside the spec's fields: listed always, exported only with include_machine=true, after the
   * spec's columns.
   */
  machine?: true;
}

/**
 * A result column with the SQL that computes it. A query's row shape is one list of these, from
 * which its SELECT list (selectList), its `columns` (resultColumns) and the check of the rows read
 * back (analytics/activities/rows.ts) all come, so they cannot disagree on names or order.
 */
export interface ColumnSql extends ResultColumn {
  sql: string;
}

/**
 * ClickHouse settings every activity query runs with, listing or export: date-times as ISO 8601
 * UTC (2026-11-22T10:00:00.000Z, the API's format) and 64-bit integers as JSON numbers.
 *
 * distributed_product_mode only matters in cluster mode (analytics/sharding.ts), where a subquery
 * over a Distributed table inside a query sent to the shards (unopened's opens of its mails, the
 * msg_id export's recipients) would otherwise be refused: each shard reads its own local table,
 * which holds every row that can match, since the sharding key keeps a message's mails and
 * events together. On a single node there is no Distributed table and it changes nothing.
 */
export const ACTIVITY_SETTINGS = {
  date_time_output_format: 'iso',
  output_format_json_quote_64bit_integers: 0,
  distributed_product_mode: 'local',
} as const;

export const selectList = (columns: readonly ColumnSql[]): string => columns.map((c) => `${c.sql} AS \`${c.name}\``).join(',\n  ');

export const resultColumns = (columns: readonly ColumnSql[]): ResultColumn[] =>
  columns.map(({ name, kind, nullable, machine }) => ({ name, kind, ...(nullable ? { nullable } : {}), ...(machine ? { machine } : {}) }));
