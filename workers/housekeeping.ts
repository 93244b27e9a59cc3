import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { JobQueue } from '../domain/jobs.js';
import { instancesWithMailsOnHold, releaseOnHold, requeueStrandedMails } from '../domain/mail/onhold.js';
import { purgeExpiredMails } from '../domain/mail/retention.js';
import { deleteShipped } from '../domain/tracking/outbox.js';
import { withTransaction, type Pool } from '../sql/pool.js';

/** Hours a shipped outbox event stays in Postgres (scanner detection looks back at recent clicks). */
export const SHIPPED_EVENTS_KEEP_HOURS = 24;

export const RELEASE_ONHOLD_QUEUE = 'mail.release-onhold';
export const RETENTION_QUEUE = 'mail.retention';

/**
 * Scheduled housekeeping, as pg-boss schedules (one run per tick across all workers):
 * every minute, mails on hold go back to the queue where the quota allows (a new month, or a
 * raise), mails left without a send job get one, and tracking events ClickHouse has had for a
 * day leave the Postgres outbox; every night, mails past the 3-month online window are purged.
 */
export async function registerHousekeeping(boss: PgBoss, deps: { pool: Pool; queue: JobQueue; logger: Logger }): Promise<void> {
  await boss.work(RELEASE_ONHOLD_QUEUE, async () => {
    for (const tenant of await instancesWithMailsOnHold(deps.pool)) {
      const n = await releaseOnHold(tenant, deps.pool, deps.queue);
      if (n) deps.logger.info({ instance: tenant.slug, released: n }, 'mails released from hold');
    }
    const stranded = await requeueStrandedMails(deps.pool, deps.queue);
    if (stranded) deps.logger.warn({ requeued: stranded }, 'mails without a send job requeued');
    // In batches of short transactions, so the tracking endpoints' inserts never wait long.
    let deleted = 0;
    for (;;) {
      const n = await withTransaction(deps.pool, (c) => deleteShipped(c, SHIPPED_EVENTS_KEEP_HOURS));
      deleted += n;
      if (n === 0) break;
    }
    if (deleted) deps.logger.info({ deleted }, 'shipped tracking events removed from the outbox');
  });
  await boss.work(RETENTION_QUEUE, async () => {
    const purged = await purgeExpiredMails(deps.pool);
    deps.logger.info(purged, 'retention purge');
  });
  await boss.schedule(RELEASE_ONHOLD_QUEUE, '* * * * *');
  await boss.schedule(RETENTION_QUEUE, '17 3 * * *');
}
