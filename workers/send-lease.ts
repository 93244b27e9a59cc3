import type { Logger } from 'pino';
import type { Pool } from '../sql/pool.js';
import { sendJobExpireSeconds } from './queues.js';

/**
 * This worker process's send lease (sql/migrations/008_send_leases.sql): the mails it has handed
 * to SMTP and not yet settled, published with an expiry that a timer keeps pushing forward while
 * the process lives.
 *
 * Why: a send job that outlives SEND_JOB_EXPIRE_SECONDS (a batch waiting on a relay that answers
 * slowly) is retried by pg-boss while its first run is still going; without the lease the retry
 * finds the mail queued and sends it a second time. With it, the retry sees the mail in a live
 * lease, does not send it, and fails so that pg-boss tries again after its backoff
 * (workers/send-mail.ts): by then the run that has the mail has settled it (the retry finds it
 * final and completes), or its process has died and its lease has lapsed (the retry sends).
 *
 * The lease lapses well before a dead process's jobs expire (a quarter of SEND_JOB_EXPIRE_SECONDS,
 * at most a minute), so a crash costs no more than today's expiry. The published list can be one
 * refresh behind the process: a mail settled since still looks held for that long (its retry just
 * waits a backoff more); a mail handed over since cannot have an expired job yet.
 */
export interface SendLease {
  /** This process's mails between transaction A (queued) and their settled reply. */
  readonly inFlight: Set<string>;
  stop(): Promise<void>;
}

/** The lease's life and refresh period: it outlives three missed refreshes (a Postgres blip). */
export function leaseTiming(expireSeconds = sendJobExpireSeconds()): { ttlSeconds: number; refreshMs: number } {
  const ttlSeconds = Math.min(60, Math.max(2, expireSeconds / 4));
  return { ttlSeconds, refreshMs: Math.round((ttlSeconds * 1000) / 4) };
}

export async function startSendLease(pool: Pool, workerId: string, logger: Logger): Promise<SendLease> {
  const { ttlSeconds, refreshMs } = leaseTiming();
  const inFlight = new Set<string>();
  const publish = () =>
    pool.query(
      `INSERT INTO send_leases (worker_id, mail_ids, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
       ON CONFLICT (worker_id) DO UPDATE SET mail_ids = EXCLUDED.mail_ids, expires_at = EXCLUDED.expires_at`,
      [workerId, [...inFlight], ttlSeconds],
    );
  await publish();
  // Rows of processes long gone are noise; a live one refreshes every refreshMs.
  await pool.query("DELETE FROM send_leases WHERE expires_at < now() - interval '1 day'");
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = publish().catch((err: unknown) => logger.warn({ err }, 'could not refresh the send lease; retried at the next tick'));
  }, refreshMs);
  timer.unref();
  return {
    inFlight,
    async stop() {
      clearInterval(timer);
      await running;
      // Whatever is still in flight was not settled by this process: let the retries have it.
      await pool.query('DELETE FROM send_leases WHERE worker_id = $1', [workerId]).catch(() => {});
    },
  };
}
