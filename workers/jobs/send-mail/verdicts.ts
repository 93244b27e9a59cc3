import type PgBoss from 'pg-boss';
import { SEND_MAIL_QUEUE } from '../../../domain/job-queue.js';
import type { InstanceMails, SendJob } from './deps.js';

/*
 * The last step of a send batch (workers/jobs/send-mail/index.ts): every job of the batch is
 * settled on its own. A deferred mail fails only its job (pg-boss's batch failure would retry the
 * whole batch). Jobs not failed here are completed by pg-boss when the batch's handler returns
 * (its completion only touches jobs still active).
 */

/** What becomes of a mail's jobs: completed, or failed with this message (pg-boss retries them). */
export type JobVerdict = { done: true } | { done: false; error: string };

/** job id -> its verdict; a job without one is completed. */
export type Verdicts = Map<string, JobVerdict>;

/** The verdict on a mail is its jobs' (a duplicate job shares the first one's fate). */
export function settleMail(verdicts: Verdicts, mails: InstanceMails, mailId: string, verdict: JobVerdict): void {
  for (const job of mails.get(mailId) ?? []) verdicts.set(job.id, verdict);
}

export async function failUnfinishedJobs(boss: PgBoss, jobs: readonly SendJob[], verdicts: Verdicts): Promise<void> {
  for (const job of jobs) {
    const verdict = verdicts.get(job.id);
    if (verdict && !verdict.done) await boss.fail(SEND_MAIL_QUEUE, job.id, { message: verdict.error });
  }
}

/** An error as the message of a failed job or the reason of a drop. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
