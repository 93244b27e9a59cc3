import { expirePendingEvents } from '../../domain/consent/confirmation.js';
import { defineSchedule } from '../machinery/job.js';

/**
 * Every ten minutes: double opt-in events still pending CONSENT_CONFIRM_DAYS after their creation
 * become expired (domain/consent/confirmation.ts). A link followed in between already refuses
 * (the window is checked where the event is read); this makes the status visible in the history
 * and writes consent.event.expired.
 */
export const consentExpiryJob = defineSchedule({
  name: 'consent.expire-pending',
  schedule: '*/10 * * * *',
  async handle({ pool, config, logger }) {
    const expired = await expirePendingEvents(pool, config.consent.confirmDays);
    if (expired) logger.info({ expired, confirmDays: config.consent.confirmDays }, 'pending consent events expired');
  },
});
