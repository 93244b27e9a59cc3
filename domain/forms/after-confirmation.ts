import type { Client } from '../../sql/pool.js';
import {
  FORM_DATASET_FEED_QUEUE,
  FORM_SUBMISSION_MAIL_QUEUE,
  type FormDatasetFeedJob,
  type FormSubmissionMailJob,
} from '../job-queue.js';
import type { Tenant } from '../tenancy/context.js';

/**
 * What a submission sets off once it is confirmed (at once when the form needs no confirmation,
 * else when the person follows the confirmation link): the auto-reply and the team notice when
 * the form has them, and the feeding of its dataset. Jobs, enqueued by the caller in the
 * confirming transaction: nothing is mailed or fed for a submission that did not commit, and
 * nothing runs in the request. The auto-reply waits for the confirmation on purpose: an address
 * nobody confirmed gets one mail (the confirmation), not two (docs/forms.md).
 */
/** What a form has configured that a confirmed submission sets off. */
export interface ConfirmedEffects {
  auto_reply: boolean;
  team_notice: boolean;
  dataset: boolean;
}

/** The SQL of ConfirmedEffects for `f` (forms). */
export const CONFIRMED_EFFECTS = `(f.auto_reply_template_id IS NOT NULL OR f.auto_reply_html IS NOT NULL OR f.auto_reply_text IS NOT NULL) AS auto_reply,
  cardinality(f.team_notice_emails) > 0 AS team_notice, f.dataset_id IS NOT NULL AS dataset`;

/** The jobs of a confirmed submission, from what its form has configured. */
export function confirmedJobs(tenant: Tenant, form: ConfirmedEffects, submissionId: number): Array<{ name: string; data: object }> {
  const jobs: Array<{ name: string; data: object }> = [];
  const mail = (kind: FormSubmissionMailJob['mail']) => {
    const data: FormSubmissionMailJob = { instance_id: tenant.instanceId, submission_id: submissionId, mail: kind };
    jobs.push({ name: FORM_SUBMISSION_MAIL_QUEUE, data });
  };
  if (form.auto_reply) mail('auto_reply');
  if (form.team_notice) mail('team_notice');
  if (form.dataset) {
    const data: FormDatasetFeedJob = { instance_id: tenant.instanceId, submission_id: submissionId };
    jobs.push({ name: FORM_DATASET_FEED_QUEUE, data });
  }
  return jobs;
}

/** The same, reading the form (the confirmation link's transaction). */
export async function afterConfirmationJobs(tenant: Tenant, c: Client, formId: number, submissionId: number): Promise<Array<{ name: string; data: object }>> {
  const { rows } = await c.query<ConfirmedEffects>({
    name: 'form-confirmed-effects',
    text: `SELECT ${CONFIRMED_EFFECTS} FROM forms f WHERE f.instance_id = $1 AND f.id = $2`,
    values: [tenant.instanceId, formId],
  });
  return rows[0] ? confirmedJobs(tenant, rows[0], submissionId) : [];
}
