import { AppError } from '../../domain/errors.js';
import { sendSubmissionMail } from '../../domain/forms/mails.js';
import { FORM_SUBMISSION_MAIL_QUEUE, type FormSubmissionMailJob } from '../../domain/job-queue.js';
import { loadTenant } from '../../domain/tenancy/instances.js';
import { trackingSecret } from '../../domain/tracking/secret.js';
import { defineJob, type JobContext } from '../machinery/job.js';
import { isRowId } from '../../domain/row-id.js';

const MAILS: ReadonlyArray<FormSubmissionMailJob['mail']> = ['confirmation', 'auto_reply', 'team_notice'];

function parse(payload: unknown): FormSubmissionMailJob | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const p = payload as Record<string, unknown>;
  if (!isRowId(p.instance_id) || !isRowId(p.submission_id) || !MAILS.includes(p.mail as FormSubmissionMailJob['mail'])) return undefined;
  return { instance_id: p.instance_id, submission_id: p.submission_id, mail: p.mail as FormSubmissionMailJob['mail'] };
}

/**
 * As the consent confirmation mail: a rate limit (429) or Postgres down (503) is thrown so pg-boss
 * retries with backoff; any other refusal cannot change on a retry and is logged.
 */
async function handle(data: FormSubmissionMailJob, { pool, config, logger, queue }: JobContext): Promise<void> {
  const tenant = await loadTenant(pool, data.instance_id);
  const log = { instanceId: data.instance_id, submissionId: data.submission_id, mail: data.mail };
  if (!tenant) {
    logger.error(log, 'form submission mail for an unknown instance ignored');
    return;
  }
  try {
    const result = await sendSubmissionMail(tenant, pool, queue, { submissionId: data.submission_id, mail: data.mail }, {
      publicUrl: config.publicUrl,
      secret: await trackingSecret(pool, config.trackingSecret),
      confirmDays: config.consent.confirmDays,
      maxBodyBytes: config.render.maxBodyBytes,
    });
    if (result.outcome === 'sent') logger.info({ ...log, sender: result.sender, msgId: result.accepted.msg_id }, 'form submission mail accepted');
    else if (result.outcome === 'no_sender') logger.error({ ...log, reason: result.reason }, 'form submission mail not sent: no sender can send it');
    else logger.info({ ...log, reason: result.reason }, 'form submission mail not needed');
  } catch (err) {
    if (err instanceof AppError && err.status !== 429 && err.status !== 503) {
      logger.error({ ...log, code: err.code, err: err.message }, 'form submission mail refused at acceptance');
      return;
    }
    throw err;
  }
}

/**
 * A form submission's mail (domain/forms/mails.ts): its confirmation mail, auto-reply or team
 * notice, one job each, enqueued with the submission or its confirmation; consumed in batches
 * (`batch`, workers/machinery/batched-work.ts).
 */
export const formSubmissionMailJob = defineJob({
  name: FORM_SUBMISSION_MAIL_QUEUE,
  policy: { retryLimit: 8, retryDelay: 30, retryBackoff: true, expireInSeconds: 300 },
  parse,
  handle,
  batch: 10,
});
