import { purgeExpiredMails } from '../domain/mail/retention.js';
import { defineJob, noPayload } from './job.js';

/** Nightly: mails past the 3-month online window are purged. */
export const retentionJob = defineJob({
  name: 'mail.retention',
  policy: { policy: 'singleton' },
  schedule: '17 3 * * *',
  parse: noPayload,
  async handle(_data, { pool, logger }) {
    const purged = await purgeExpiredMails(pool);
    logger.info(purged, 'retention purge');
  },
});
