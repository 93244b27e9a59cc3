import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { JobQueue } from '../domain/jobs.js';
import { instancesWithMailsOnHold, releaseOnHold, requeueStrandedMails } from '../domain/mail/onhold.js';
import { purgeExpiredMails } from '../domain/mail/retention.js';
import type { Pool } from '../sql/pool.js';

export const RELEASE_ONHOLD_QUEUE = 'mail.release-onhold';
export const RETENTION_QUEUE = 'mail.retention';

/**
 * Scheduled housekeeping, as pg-boss schedules (one run per tick across all workers):
 * every minute, mails on hold go back to the queue where the quota allows (a new month, or a
 * raise) and mails left without a send job get one; every night, mails past the 3-month online window are purged.
 */
export async function registerHousekeeping(boss: PgBoss, deps: { pool: Pool; queue: JobQueue; logger: Logger }): Promise<void> {
  await boss.work(RELEASE_ONHOLD_QUEUE, async () => {
    for (const tenant of await instancesWithMailsOnHold(deps.pool)) {
      const n = await releaseOnHold(tenant, deps.pool, deps.queue);
      if (n) deps.logger.info({ instance: tenant.slug, released: n }, 'mails released from hold');
    }
    const stranded = await requeueStrandedMails(deps.pool, deps.queue);
    if (stranded) deps.logger.warn({ requeued: stranded }, 'mails without a send job requeued');
  });
  await boss.work(RETENTION_QUEUE, async () => {
    const purged = await purgeExpiredMails(deps.pool);
    deps.logger.info(purged, 'retention purge');
  });
  await boss.schedule(RELEASE_ONHOLD_QUEUE, '* * * * *');
  await boss.schedule(RETENTION_QUEUE, '17 3 * * *');
}
