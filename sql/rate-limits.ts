import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Pool } from './pool.js';

/** The table of every shared limit (migration 023_rate_limits.sql, the library's own columns). */
export const RATE_LIMITS_TABLE = 'rate_limits';

/**
 * A limit of `points` per key (a client address) per `durationSeconds`, counted in Postgres so
 * that every dyno on this database spends one budget: rate-limiter-flexible's RateLimiterPostgres
 * over rate_limits, whose table the release step creates (`tableCreated: true`: the library never
 * runs DDL at a dyno's start).
 *
 * - Keys: `<name>:<points>:<key>`. The name keeps limits apart in the one table; the size is in it
 *   so that a budget is one size for everyone who counts in it (dynos configured alike share it;
 *   while INBOUND_RATE_PER_MINUTE changes across a rolling restart, old and new dynos count apart
 *   for at most a window; test listeners with other limits on one database do not drain each other).
 * - Postgres unreachable: each call falls back to an in-memory limiter of the same size in this
 *   process (`insuranceLimiter`), so an outage makes the limit per dyno for its duration, never a
 *   500 or a refusal of every client.
 * - A client past its budget is refused from this dyno's memory for the rest of its window
 *   (`inMemoryBlockOnConsumed`): a flood costs no write per refused request.
 * - Expired rows: the library deletes those expired over an hour ago every 5 minutes from each
 *   dyno (`clearExpiredByTimeout`, an index on expire; concurrent deletes from N dynos are
 *   harmless). A live key keeps one row, reset in place when its window has passed.
 */
export function sharedRateLimiter(pool: Pool, name: string, points: number, durationSeconds = 60): RateLimiterPostgres {
  return new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    tableName: RATE_LIMITS_TABLE,
    tableCreated: true,
    clearExpiredByTimeout: true,
    keyPrefix: `${name}:${points}`,
    points,
    duration: durationSeconds,
    inMemoryBlockOnConsumed: points + 1,
    insuranceLimiter: new RateLimiterMemory({ points, duration: durationSeconds }),
  });
}
