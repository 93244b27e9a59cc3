/**
 * One activity query (sent, opens, clicks, unopened; per group_by), as both its listing and its
 * export use it: a ClickHouse SELECT with `{name:Type}` parameters, its ORDER BY included and no
 * LIMIT, whose result columns are exactly `columns`, in the spec's order for that listing. The
 * listing adds LIMIT/OFFSET; the export streams the whole result (analytics/export.ts).
 */
export interface ActivityQuery {
  /** Named for logs and ClickHouse's query log (log_comment), e.g. 'opens.group_by_mail_id'. */
  name: string;
  sql: string;
  params: Record<string, unknown>;
  /** Result columns in order, and whether each is text (the CSV formula guard applies) or not. */
  columns: ReadonlyArray<{ name: string; kind: 'text' | 'number' | 'datetime' }>;
}
