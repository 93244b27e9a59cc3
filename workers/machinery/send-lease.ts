import type { Logger } from 'pino';
import type { Pool } from '../../sql/pool.js';

/**
 * This worker process's send lease (sql/migrations/008_send_leases.sql): proof that the process
 * lives, with an expiry a timer keeps pushing forward, plus the set of mails its runs have at SMTP.
 *
 * Why: a send job that outlives SEND_JOB_EXPIRE_SECONDS (a batch waiting on a relay that answers
 * slowly) is retried by pg-boss while its first run is still going; the retry used to find the
 * mail queued and send it a second time. Transaction A records on the mail which worker sends it
 * (held_by, held_since: domain/mail/transitions.ts, with the move itself), so no other run can see
 * it queued and unclaimed; every later move clears the claim. A retry then leaves the mail alone
 * while it is held (workers/jobs/send-mail/claim.ts):
 *  - by another worker whose lease is live, for less than the hold bound (an hour, or twice the
 *    job expiry if longer: a hung send does not keep its mail forever, a slow one keeps it);
 *  - by this process, while one of its runs has the mail in `inFlight` (a run that ended without
 *    recording a reply, e.g. Postgres failed, no longer has it: the retry sends).
 * The mail is looked at again 10 s later, by a job for then (workers/jobs/send-mail/claim.ts,
 * HELD_LOOK_AGAIN_MS), and again until it is settled (that look finds it final), or its holder
 * died and its lease lapsed, or the hold bound passed (that look sends). A dead worker's lease lapses a quarter of the job expiry after its last refresh, at most
 * a minute, well before its own jobs expire.
 */
export interface SendLease {
  readonly workerId: string;
  /** This process's mails between transaction A (queued) and their settled reply. */
  readonly inFlight: Set<string>;
  /** How long a hold keeps other runs off a queued mail, at most. */
  readonly holdSeconds: number;
  stop(): Promise<void>;
}

/** The lease's life and refresh period: it outlives three missed refreshes (a Postgres blip). */
export function leaseTiming(expireSeconds: number): { ttlSeconds: number; refreshMs: number; holdSeconds: number } {
  const ttlSeconds = Math.min(60, Math.max(2, expireSeconds / 4));
  return { ttlSeconds, refreshMs: Math.round((ttlSeconds * 1000) / 4), holdSeconds: Math.max(3600, 2 * expireSeconds) };
}

/** jobExpireSeconds: the send queue's job expiry (SEND_JOB_EXPIRE_SECONDS), which the lease's timing follows. */
export async function startSendLease(pool: Pool, workerId: string, logger: Logger, jobExpireSeconds: number): Promise<SendLease> {
  const { ttlSeconds, refreshMs, holdSeconds } = leaseTiming(jobExpireSeconds);
  const inFlight = new Set<string>();
  const refresh = () =>
    pool.query(
      `INSERT INTO send_leases (worker_id, expires_at) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (worker_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
      [workerId, ttlSeconds],
    );
  await refresh();
  // Rows of processes long gone are noise; a live one refreshes every refreshMs.
  await pool.query("DELETE FROM send_leases WHERE expires_at < now() - interval '1 day'");
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return; // one refresh at a time: a late one must not land after a newer one or after stop()
    running = refresh()
      .catch((err: unknown) => logger.warn({ err }, 'could not refresh the send lease; retried at the next tick'))
      .finally(() => (running = undefined));
  }, refreshMs);
  timer.unref();
  return {
    workerId,
    inFlight,
    holdSeconds,
    async stop() {
      clearInterval(timer);
      await running;
      // Runs still at SMTP (a graceful stop that timed out) may yet deliver their mails: leave
      // the lease to lapse rather than invite retries now.
      if (inFlight.size) return;
      await pool.query('DELETE FROM send_leases WHERE worker_id = $1', [workerId]).catch(() => {});
    },
  };
}
