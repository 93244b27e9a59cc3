import { randomBytes } from 'node:crypto';
import { query, type Pool } from '../../sql/pool.js';

/**
 * The key that signs tracking and unsubscribe links (domain/tracking/tokens.ts). Every web and
 * worker dyno must hold the same one: `configured` (TRACKING_SECRET, from the process's
 * Config) when the operator sets it, else a random key generated once into service_secrets by
 * whichever process asks first (INSERT ... ON CONFLICT DO NOTHING, then read back, so concurrent
 * first callers agree). Cached per pool: the key never changes while processes run (rotating it
 * breaks links in mails already sent).
 */
const cache = new WeakMap<Pool, Promise<string>>();

export function trackingSecret(pool: Pool, configured?: string): Promise<string> {
  if (configured) return Promise.resolve(configured);
  let secret = cache.get(pool);
  if (!secret) {
    secret = loadOrCreate(pool);
    cache.set(pool, secret);
    // A failed read (Postgres down) is retried by the next caller rather than cached.
    secret.catch(() => cache.delete(pool));
  }
  return secret;
}

async function loadOrCreate(pool: Pool): Promise<string> {
  await query(pool, `INSERT INTO service_secrets (name, value) VALUES ('tracking', $1) ON CONFLICT (name) DO NOTHING`, [
    randomBytes(32).toString('base64url'),
  ]);
  const { rows } = await query<{ value: string }>(pool, `SELECT value FROM service_secrets WHERE name = 'tracking'`);
  if (!rows[0]) throw new Error('service_secrets has no tracking row after inserting it');
  return rows[0].value;
}
