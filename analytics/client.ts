import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';

export type { ClickHouseClient };

export const DEFAULT_DATABASE = 'cartero';

/**
 * A Date as DateTime64(3, 'UTC') text (2026-11-22 10:00:00.123), for parameters and inserted
 * rows: ClickHouse reads it in the column's zone, UTC.
 */
export function chDateTime(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/**
 * The database named by a CLICKHOUSE_URL: its path (`http://host:8123/cartero` → `cartero`),
 * `cartero` when the path is empty. Percent-escapes are decoded.
 */
export function databaseOf(url: string): string {
  const path = new URL(url).pathname.replace(/^\/+|\/+$/g, '');
  if (path === '') return DEFAULT_DATABASE;
  const database = decodeURIComponent(path);
  if (database.includes('/')) {
    throw new Error(`ClickHouse URL path must be a single database name, got "${path}"`);
  }
  return database;
}

/**
 * @clickhouse/client 1.x already reads a URL path as the database, but its default when the path
 * is empty is `default`, and it takes everything after the first slash verbatim (no decoding).
 * So we strip the path and pass `database` explicitly: one rule (databaseOf) for the app, the
 * migrator and the client. Credentials and `?` parameters stay in the URL for the client to parse
 * (it rejects unknown ones, and `?pathname=` remains the way to reach ClickHouse behind a proxy).
 *
 * `database` overrides the URL's database; the migrator uses `default` to create the real one.
 */
export function createClickHouseClient(
  url: string,
  database: string = databaseOf(url),
  opts: { requestTimeoutMs?: number } = {},
): ClickHouseClient {
  const server = new URL(url);
  server.pathname = '/';
  return createClient({
    url: server.toString(),
    database,
    // Shows up as the client name in system.query_log / system.processes of the server.
    application: 'cartero',
    // Its own logger prints every failed request to stderr in a non-JSON format; failures reach
    // our code as errors and are logged (or answered 503) there, once, through pino.
    log: { level: ClickHouseLogLevel.OFF },
    ...(opts.requestTimeoutMs ? { request_timeout: opts.requestTimeoutMs } : {}),
  });
}

/**
 * Whether err is @clickhouse/client's request timeout: no byte from the server for
 * `request_timeout` ms (a server stopped or overloaded, whose kernel still accepts the
 * connection, so nothing is refused). The client throws a plain Error with this message and no
 * code, so the message is the only mark; api/http/errors.ts answers it 503 like a refused
 * connection.
 */
export function isClickHouseTimeout(err: unknown): boolean {
  return err instanceof ClickHouseTimeout || (err instanceof Error && err.message === 'Timeout error.');
}

/** A bound of ours on a ClickHouse request ran out (an export's first byte): answered as the client's own timeout. */
export class ClickHouseTimeout extends Error {
  override name = 'ClickHouseTimeout';
}

/** True when the server answers its /ping endpoint; never throws. */
export async function pingClickHouse(client: ClickHouseClient): Promise<boolean> {
  try {
    return (await client.ping()).success;
  } catch {
    return false;
  }
}

/**
 * fetch() for a ClickHouse URL that may carry credentials (the embedded server's always do):
 * fetch refuses a URL with a user or password in it, so they travel as the Basic Authorization
 * header, the one @clickhouse/client sends. For scripts and benchmarks that talk plain HTTP.
 */
export function clickHouseFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const target = new URL(url);
  const headers = new Headers(init.headers);
  if (target.username || target.password) {
    const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
    target.username = '';
    target.password = '';
  }
  return fetch(target, { ...init, headers });
}

/** The URL without its credentials: what a log line or an error message may show. */
export function withoutCredentials(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return shown.toString();
}
