import { purgeExpiredMails } from '../../domain/mail/retention.js';
import { defineSchedule } from '../machinery/job.js';

/** Nightly: mails past the 3-month online window are purged. */
export const retentionJob = defineSchedule({
  name: 'mail.retention',
  schedule: '17 3 * * *',
  async handle({ pool, logger }) {
    const purged = await purgeExpiredMails(pool);
    logger.info(purged, 'retention purge');
  },
});
