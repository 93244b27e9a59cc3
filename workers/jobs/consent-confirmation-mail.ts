import { sendConfirmationMail } from '../../domain/consent/confirmation-mail.js';
import { AppError } from '../../domain/errors.js';
import { CONSENT_CONFIRMATION_MAIL_QUEUE, type ConsentConfirmationMailJob } from '../../domain/job-queue.js';
import { loadTenant } from '../../domain/tenancy/instances.js';
import { trackingSecret } from '../../domain/tracking/secret.js';
import { defineJob } from '../machinery/job.js';
import { isRowId } from '../../domain/row-id.js';

/**
 * The double opt-in confirmation mail (domain/consent/confirmation-mail.ts), one job per
 * double_opt_in event, enqueued with the event (domain/consent/events.ts). Acceptance can fail
 * for a while (the instance's bandwidth bucket is empty: 429; Postgres did not answer: 503):
 * thrown, so pg-boss retries with backoff. Any other refusal cannot change on a retry and is
 * logged; the event then stays pending and expires.
 */
export const consentConfirmationMailJob = defineJob({
  name: CONSENT_CONFIRMATION_MAIL_QUEUE,
  policy: { retryLimit: 8, retryDelay: 30, retryBackoff: true, expireInSeconds: 300 },
  // Ten at a time, as the form mails: one per 2 s poll fell behind a busy signup page.
  batch: 10,
  parse(payload: unknown): ConsentConfirmationMailJob | undefined {
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
    const p = payload as Record<string, unknown>;
    const senderId = p.sender_id ?? null;
    if (!isRowId(p.instance_id) || !isRowId(p.event_id) || (senderId !== null && !isRowId(senderId))) return undefined;
    return { instance_id: p.instance_id, event_id: p.event_id, sender_id: senderId };
  },
  async handle(data, { pool, config, logger, queue }) {
    const tenant = await loadTenant(pool, data.instance_id);
    const log = { instanceId: data.instance_id, eventId: data.event_id };
    if (!tenant) {
      logger.error(log, 'consent confirmation mail for an unknown instance ignored');
      return;
    }
    try {
      const result = await sendConfirmationMail(
        tenant,
        pool,
        queue,
        { eventId: data.event_id, senderId: data.sender_id },
        {
          publicUrl: config.publicUrl,
          secret: await trackingSecret(pool, config.trackingSecret),
          confirmDays: config.consent.confirmDays,
          maxBodyBytes: config.render.maxBodyBytes,
        },
      );
      if (result.outcome === 'sent') {
        logger.info({ ...log, sender: result.sender, msgId: result.accepted.msg_id, mails: result.accepted.mails.length }, 'consent confirmation mail accepted');
      } else if (result.outcome === 'no_sender') {
        logger.error({ ...log, reason: result.reason }, 'consent confirmation mail not sent: no sender can send it');
      } else {
        logger.info({ ...log, reason: result.reason }, 'consent confirmation mail not needed');
      }
    } catch (err) {
      if (err instanceof AppError && err.status !== 429 && err.status !== 503) {
        logger.error({ ...log, code: err.code, err: err.message }, 'consent confirmation mail refused at acceptance');
        return;
      }
      throw err;
    }
  },
});
