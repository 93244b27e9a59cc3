/**
 * The one list of failures that mean "a dependency did not answer" (Postgres, ClickHouse over
 * HTTP, a resolver): each becomes the spec's transient 503 service_unavailable, never a 500.
 * sql/pool.ts and api/http/errors.ts both ask here.
 */

/** Node's socket errors and undici's (ClickHouse's HTTP client) for a connection that failed or broke. */
export const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'UND_ERR_SOCKET',
]);

/**
 * Postgres's SQLSTATE classes of the same kind: 08 (connection exception), 57P0x (admin or
 * crash shutdown, cannot connect now), 53 (insufficient resources).
 */
export function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('57P0') || code.startsWith('53');
}

/** Whether err, or one of the errors it wraps (`cause`, a few levels), is a connection failure. */
export function isConnectionFailure(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && CONNECTION_ERROR_CODES.has(e.code)) return true;
  }
  return false;
}
