/**
 * A timestamptz column as the API's time text, formatted by Postgres: ISO 8601 in UTC with
 * milliseconds, exactly what JSON.stringify writes for a Date (2026-11-22T10:00:00.123Z). For hot
 * listings that only print their times: it spares parsing each one into a Date to format it again.
 * Postgres keeps microseconds; like Date, the text keeps milliseconds (truncated, as node-postgres's
 * parsing does).
 */
export function isoUtc(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
