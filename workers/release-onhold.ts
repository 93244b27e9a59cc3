import { instancesWithMailsOnHold, releaseOnHold, requeueStrandedMails } from '../domain/mail/onhold.js';
import { deleteShipped } from '../domain/tracking/outbox.js';
import { withTransaction } from '../sql/pool.js';
import { defineJob, noPayload } from './job.js';

/** Hours a shipped outbox event stays in Postgres (scanner detection looks back at recent clicks). */
export const SHIPPED_EVENTS_KEEP_HOURS = 24;

/**
 * Minute housekeeping (one run per tick across all workers): mails on hold go back to the queue
 * where the quota allows (a new month, or a raise), mails left without a send job get one, and
 * tracking events ClickHouse has had for a day leave the Postgres outbox.
 */
export const releaseOnHoldJob = defineJob({
  name: 'mail.release-onhold',
  policy: { policy: 'singleton' },
  schedule: '* * * * *',
  parse: noPayload,
  async handle(_data, { pool, queue, logger }) {
    for (const tenant of await instancesWithMailsOnHold(pool)) {
      const n = await releaseOnHold(tenant, pool, queue);
      if (n) logger.info({ instance: tenant.slug, released: n }, 'mails released from hold');
    }
    const stranded = await requeueStrandedMails(pool, queue);
    if (stranded) logger.warn({ requeued: stranded }, 'mails without a send job requeued');
    // In batches of short transactions, so the tracking endpoints' inserts never wait long.
    let deleted = 0;
    for (;;) {
      const n = await withTransaction(pool, (c) => deleteShipped(c, SHIPPED_EVENTS_KEEP_HOURS));
      deleted += n;
      if (n === 0) break;
    }
    if (deleted) logger.info({ deleted }, 'shipped tracking events removed from the outbox');
  },
});
