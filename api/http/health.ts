import type { Request, Response } from 'express';
import { query } from '../../sql/pool.js';
import type { AppDeps } from './route.js';

interface Check {
  ok: boolean;
  ms: number;
}

/** A check's outcome; why it failed goes to the log, never to the caller (a probe, a scraper). */
async function timed(name: string, logger: AppDeps['logger'], fn: () => Promise<unknown>): Promise<Check> {
  const start = performance.now();
  try {
    await fn();
    return { ok: true, ms: Math.round(performance.now() - start) };
  } catch (err) {
    logger.warn({ err, check: name }, 'readiness check failed');
    return { ok: false, ms: Math.round(performance.now() - start) };
  }
}

/** /healthz: the process answers. No dependency is touched, so a DB outage does not restart dynos. */
export function healthz(_req: Request, res: Response): void {
  res.json({ status: 'ok' });
}

/**
 * /readyz: Postgres, ClickHouse and the queue (pg-boss's schema) all answer; 503 otherwise.
 * Served on the internal listener, or to a bearer of INTERNAL_TOKEN (api/internal.ts).
 * The newest worker heartbeat is reported, not required: a web dyno is ready to accept commands
 * while workers restart, the commands wait in the queue.
 */
export function readyz(deps: AppDeps) {
  return async function ready(_req: Request, res: Response): Promise<void> {
    const withTimeout = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2_000).unref())]);
    let workerSeenAt: string | null = null;
    const [postgres, clickhouse, queue] = await Promise.all([
      timed('postgres', deps.logger, () => withTimeout(query(deps.pool, 'SELECT 1'))),
      timed('clickhouse', deps.logger, async () => {
        const r = await withTimeout(deps.clickhouse.ping());
        if (!r.success) throw r.error;
      }),
      timed('queue', deps.logger, async () => {
        await withTimeout(query(deps.pool, 'SELECT version FROM pgboss.version'));
        const hb = await query<{ seen_at: Date | null }>(deps.pool, 'SELECT max(seen_at) AS seen_at FROM worker_heartbeats');
        workerSeenAt = hb.rows[0]?.seen_at?.toISOString() ?? null;
      }),
    ]);
    const ok = postgres.ok && clickhouse.ok && queue.ok;
    res.status(ok ? 200 : 503).json({
      status: ok ? 'ready' : 'unavailable',
      checks: { postgres, clickhouse, queue },
      worker_last_seen_at: workerSeenAt,
    });
  };
}
