import pg from 'pg';
import { DependencyUnavailable } from '../errors/app-error.js';
import { isConnectionFailure, isUnavailableSqlState } from '../errors/connection.js';

export type Pool = pg.Pool;
export type Client = pg.PoolClient;

// bigint (int8) columns hold ids that fit easily in a JS number for this service's lifetime;
// returning strings would leak into every response shape.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * `customPlans`: every statement planned for its own values (plan_cache_mode force_custom_plan).
 * For a pool whose named statements start on empty tables that grow fast under load (webhook
 * delivery): a generic plan cached while a table was empty kept scanning all of it once it
 * held hundreds of thousands of rows, while a custom plan sees the table's current size.
 */
export function createPool(
  connectionString: string,
  opts: { max?: number; application?: string; customPlans?: boolean; queryTimeoutMs?: number } = {},
): Pool {
  const pool = new pg.Pool({
    connectionString,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5_000,
    // pg's own client-side bound on a statement's answer: a server that is stopped (or behind a
    // dead network path) keeps pooled connections open and silent, and a statement sent on one
    // waited for as long as the outage. Unset: wait (the worker's jobs resume when it answers).
    ...(opts.queryTimeoutMs ? { query_timeout: opts.queryTimeoutMs } : {}),
    idleTimeoutMillis: 30_000,
    application_name: opts.application ?? 'cartero',
    ...(opts.customPlans ? { options: '-c plan_cache_mode=force_custom_plan' } : {}),
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** The SQLSTATE of a COMMIT refused for arriving after its request stopped waiting (migration 025). */
export const COMMIT_TOO_LATE = 'CR503';

/**
 * Connection-level failures (errors/connection.ts: socket errors, SQLSTATE classes 08, 57P0x,
 * 53) and pg's own connect timeout or lost connection become one retriable 503; anything else (a
 * bug, a constraint) is rethrown unchanged.
 */
export function asDependencyError(err: unknown): unknown {
  if (err instanceof DependencyUnavailable) return err;
  const e = err as { code?: string; message?: string };
  const code = e?.code ?? '';
  const message = e?.message ?? '';
  if (
    isConnectionFailure(err) ||
    isUnavailableSqlState(code) ||
    code === COMMIT_TOO_LATE ||
    /timeout exceeded when trying to connect|Connection terminated|Query read timeout/i.test(message)
  ) {
    return new DependencyUnavailable('postgres', err);
  }
  return err;
}

/**
 * How long after BEGIN a COMMIT may still apply, for a pool whose statements have a client-side
 * bound (a web dyno's): 90 % of that bound. A request gives up on its COMMIT at least the bound
 * after BEGIN, so a COMMIT the server reads later than this is one its request may have stopped
 * waiting for; migration 025's deferred triggers fail it rather than apply a mail answered 503.
 * The tenth left over is the time for a COMMIT that passed the check to be written and answered.
 */
export function commitWithinMs(pool: Pool): number | undefined {
  const bound = (pool.options as { query_timeout?: number }).query_timeout;
  return bound ? Math.floor(bound * 0.9) : undefined;
}

/**
 * Run fn in a transaction; connection failures become DependencyUnavailable. `begin` replaces the
 * plain BEGIN (tenant transactions send BEGIN and their settings in one round trip); on a pool
 * with a statement bound, the commit deadline rides in the same round trip.
 */
export async function withTransaction<T>(pool: Pool, fn: (c: Client) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  let client: Client;
  try {
    client = await pool.connect();
  } catch (err) {
    throw asDependencyError(err);
  }
  let unusable: unknown;
  const within = commitWithinMs(pool);
  try {
    await client.query(within ? `${begin}; SELECT set_config('cartero.commit_within_ms', '${within}', true)` : begin);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    const mapped = asDependencyError(err);
    // A connection that did not answer is dropped, not rolled back: a ROLLBACK would wait
    // behind the unanswered statement as long again, and a closed connection rolls back an
    // open transaction anyway. If the unanswered statement was the COMMIT, the server reads it
    // later than the deadline above and migration 025's check fails it (for sends and form
    // submissions); only a COMMIT that passed the check and whose answer was lost stays unknown.
    if (mapped instanceof DependencyUnavailable) unusable = err;
    else await client.query('ROLLBACK').catch(() => {});
    throw mapped;
  } finally {
    // release(err) ends the client (pg destroys the socket of one with a statement in flight).
    client.release(unusable as Error | undefined);
  }
}

/**
 * A single statement outside any tenant context (auth lookups, health); errors mapped to 503.
 * `name` makes it a prepared statement on each connection: Postgres plans it once per
 * connection instead of at every call (worth it on the per-request hot path).
 */
export async function query<R extends pg.QueryResultRow = pg.QueryResultRow>(
  pool: Pool,
  text: string,
  values: unknown[] = [],
  name?: string,
): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(name ? { name, text, values } : { text, values });
  } catch (err) {
    throw asDependencyError(err);
  }
}
