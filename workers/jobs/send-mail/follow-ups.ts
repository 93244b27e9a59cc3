import type PgBoss from 'pg-boss';
import { sendMailJobs } from '../../../domain/job-queue.js';

/*
 * The last step of a send batch (workers/jobs/send-mail/index.ts): the mails it did not finish
 * get jobs for when they are to be looked at again (a deferred mail's next try, a mail another
 * run still had at SMTP), one job per instance and time for all of them, in one insert for the
 * whole batch. Only then are the batch's jobs completed: a worker killed before this leaves them
 * active, and pg-boss retries them after their expiry (a follow-up written twice is harmless: the
 * mails' rows decide what is sent).
 */

/** instance -> when (ms since the epoch) -> the mails to look at again then. */
export type FollowUps = Map<number, Map<number, string[]>>;

export function addFollowUp(followUps: FollowUps, instanceId: number, mailId: string, at: Date): void {
  const byTime = followUps.get(instanceId) ?? new Map<number, string[]>();
  followUps.set(instanceId, byTime);
  const ms = at.getTime();
  byTime.set(ms, [...(byTime.get(ms) ?? []), mailId]);
}

export async function enqueueFollowUps(boss: PgBoss, followUps: FollowUps): Promise<void> {
  const jobs = [...followUps].flatMap(([instanceId, byTime]) => [...byTime].flatMap(([ms, mailIds]) => sendMailJobs(instanceId, mailIds, new Date(ms))));
  if (jobs.length) await boss.insert(jobs);
}
