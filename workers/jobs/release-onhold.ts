import { instancesWithMailsOnHold, releaseOnHold, requeueStrandedMails } from '../../domain/mail/onhold.js';
import { deleteShipped } from '../../domain/outbox/pump.js';
import { withTransaction, type Pool } from '../../sql/pool.js';
import { defineSchedule } from '../machinery/job.js';

/** Hours a shipped outbox event stays in Postgres (scanner detection looks back at recent clicks). */
export const SHIPPED_EVENTS_KEEP_HOURS = 24;

/**
 * Minute housekeeping (one run per tick across all workers): mails on hold go back to the queue
 * where the quota allows (a new month, or a raise), mails left without a send job get one, and
 * events ClickHouse has had for a day leave the event outbox (purgeShippedOutboxEvents).
 */
export const releaseOnHoldJob = defineSchedule({
  name: 'mail.release-onhold',
  schedule: '* * * * *',
  async handle({ pool, queue, logger }) {
    for (const tenant of await instancesWithMailsOnHold(pool)) {
      const n = await releaseOnHold(tenant, pool, queue);
      if (n) logger.info({ instance: tenant.slug, released: n }, 'mails released from hold');
    }
    const stranded = await requeueStrandedMails(pool, queue);
    if (stranded) logger.warn({ requeued: stranded }, 'mails without a send job requeued');
    // Not a release: it rides on this minute tick (the queue keeps its name; its schedule suits both).
    const deleted = await purgeShippedOutboxEvents(pool);
    if (deleted) logger.info({ deleted }, 'shipped events removed from the event outbox');
  },
});

/**
 * Events ClickHouse has had for SHIPPED_EVENTS_KEEP_HOURS leave the event outbox, in
 * batches of short transactions, so the tracking endpoints' inserts never wait long. Returns how
 * many were removed.
 */
export async function purgeShippedOutboxEvents(pool: Pool): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await withTransaction(pool, (c) => deleteShipped(c, SHIPPED_EVENTS_KEEP_HOURS));
    deleted += n;
    if (n === 0) return deleted;
  }
}
