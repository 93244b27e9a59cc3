import type { Client } from '../../sql/pool.js';
import { AppError, RateLimited } from '../errors.js';
import type { Tenant } from '../tenancy/context.js';

export interface SendLimits {
  send_rate_per_second: number | null;
  send_burst: number | null;
}

/**
 * The instance's bandwidth limit: a token bucket of `burst` mails refilled at `rate` per second,
 * kept in Postgres so every web dyno draws from the same bucket (the row lock serializes sends
 * of one instance; other instances are not affected). Runs inside the send transaction, so a
 * send that fails later gives its tokens back on rollback. A send larger than the burst could
 * never pass: 413. Short of tokens: 429 with the seconds until enough have refilled.
 */
export async function takeSendTokens(tenant: Tenant, client: Client, limits: SendLimits, count: number): Promise<void> {
  const rate = limits.send_rate_per_second;
  if (rate === null) return;
  const burst = limits.send_burst ?? Math.max(1, Math.ceil(rate));
  if (count > burst) {
    throw new AppError('request_too_large', `${count} recipients exceed the instance's burst capacity of ${burst} mails`);
  }
  await client.query(
    `INSERT INTO bandwidth_buckets (instance_id, tokens, refilled_at) VALUES ($1, $2, clock_timestamp())
     ON CONFLICT (instance_id) DO NOTHING`,
    [tenant.instanceId, burst],
  );
  const { rows } = await client.query<{ granted: boolean; available: number }>(
    `WITH b AS (
       SELECT least($3::float8, tokens + $2::float8 * extract(epoch FROM clock_timestamp() - refilled_at)) AS available
         FROM bandwidth_buckets WHERE instance_id = $1 FOR UPDATE
     )
     UPDATE bandwidth_buckets
        SET tokens = CASE WHEN b.available >= $4 THEN b.available - $4 ELSE b.available END,
            refilled_at = clock_timestamp()
       FROM b
      WHERE instance_id = $1
     RETURNING b.available >= $4 AS granted, b.available`,
    [tenant.instanceId, rate, burst, count],
  );
  const row = rows[0]!;
  if (!row.granted) throw new RateLimited((count - row.available) / rate);
}
