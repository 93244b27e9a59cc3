import { purgeDeliverabilityAlerts } from '../../domain/deliverability/alerts.js';
import { purgeSendKeys } from '../../domain/mail/idempotency.js';
import { purgeRecipientDomains } from '../../domain/mail/recipient-mx.js';
import { purgeExpiredMails } from '../../domain/mail/retention.js';
import { defineSchedule } from '../machinery/job.js';

/**
 * Nightly: mails past the 3-month online window are purged, recipient domains' MX verdicts no
 * longer used, deliverability alerts as old as those mails, and sends' idempotency keys past
 * their 24 hours.
 */
export const retentionJob = defineSchedule({
  name: 'mail.retention',
  schedule: '17 3 * * *',
  async handle({ pool, logger }) {
    const purged = await purgeExpiredMails(pool);
    const domains = await purgeRecipientDomains(pool);
    const alerts = await purgeDeliverabilityAlerts(pool);
    const sendKeys = await purgeSendKeys(pool);
    logger.info({ ...purged, recipientDomains: domains, deliverabilityAlerts: alerts, sendKeys }, 'retention purge');
  },
});
