import type { Client } from '../sql/pool.js';

/**
 * Enqueue jobs inside the caller's transaction (pg-boss's `db` option), so a business write and
 * its jobs commit together or not at all. Implemented over pg-boss in workers/machinery/queue.ts.
 */
export interface JobQueue {
  /** expireInSeconds: the job's own expiry instead of its queue's (how long an active job may run before a retry). */
  insert(client: Client, jobs: Array<{ name: string; data: object; expireInSeconds?: number; priority?: number; startAfter?: Date }>): Promise<void>;
}

/*
 * The names and payloads of the jobs that code outside workers/ enqueues: the enqueuer needs only
 * these, never the handler. Each job's policy, schedule and handler live in its module under
 * workers/ (the list: workers/jobs/index.ts). Names are pg-boss queue names stored in every database:
 * never rename one.
 */

/**
 * The send job: one per batch of up to SEND_JOB_MAILS mails of one instance, enqueued with the
 * mails' rows by acceptance (accept.ts: a message's mails), by the on-hold release (onhold.ts), and
 * by the send worker itself for the mails it must try again later (workers/jobs/send-mail/: a
 * deferred mail's next try, at its `next_attempt_at`). Each mail's state, tries and next try are
 * in its `mails` row, not in the job: the job only says which mails to look at, and when.
 * Consumed by the send worker (workers/jobs/send-mail/), which also takes the one-mail jobs
 * (`mail_id`) that code before issue 42 enqueued (sql/migrations/035_send_batches.sql moved the
 * queued ones; a rolling upgrade's old dynos may still write some).
 */
export const SEND_MAIL_QUEUE = 'mail.send';
export interface SendMailJob {
  instance_id: number;
  mail_ids: string[];
}

/**
 * Mails per send job at most: the default SEND_BATCH_SIZE, so that a job is at most one of the
 * worker's batches. A message's 500 recipients are 5 jobs; 1 queue row per 100 mails.
 */
export const SEND_JOB_MAILS = 100;

/** The send jobs for these mails of one instance, in their order; `startAfter`: not before then (a retry). */
export function sendMailJobs(instanceId: number, mailIds: readonly string[], startAfter?: Date): Array<{ name: string; data: SendMailJob; startAfter?: Date }> {
  const jobs: Array<{ name: string; data: SendMailJob; startAfter?: Date }> = [];
  for (let i = 0; i < mailIds.length; i += SEND_JOB_MAILS) {
    const data: SendMailJob = { instance_id: instanceId, mail_ids: mailIds.slice(i, i + SEND_JOB_MAILS) };
    jobs.push(startAfter ? { name: SEND_MAIL_QUEUE, data, startAfter } : { name: SEND_MAIL_QUEUE, data });
  }
  return jobs;
}

/**
 * The soft-bounce threshold job (workers/jobs/soft-bounces.ts): one per instance with new soft bounces,
 * sent with singletonKey = the instance id.
 */
export const SOFT_BOUNCES_QUEUE = 'restrictions.soft-bounces';
export interface SoftBouncesJob {
  instance_id: number;
}

/**
 * The double opt-in confirmation mail (workers/jobs/consent-confirmation-mail.ts): one per
 * double_opt_in consent event, enqueued with the event by registerEvent (domain/consent/events.ts).
 * sender_id: the sender to send it from (a form's auto_reply_sender_id); null lets the job choose
 * (domain/consent/confirmation-mail.ts, docs/consent.md).
 */
export const CONSENT_CONFIRMATION_MAIL_QUEUE = 'consent.confirmation-mail';
export interface ConsentConfirmationMailJob {
  instance_id: number;
  event_id: number;
  sender_id: number | null;
}

/**
 * A form submission's mails (workers/jobs/form-submission-mail.ts): the confirmation mail (pending
 * submissions), the auto-reply and the team notice (once confirmed). One job per mail, enqueued
 * with the submission or its confirmation (domain/forms/submit.ts, confirm.ts).
 */
export const FORM_SUBMISSION_MAIL_QUEUE = 'form.submission-mail';
export interface FormSubmissionMailJob {
  instance_id: number;
  submission_id: number;
  mail: 'confirmation' | 'auto_reply' | 'team_notice';
}

/** Feeding a form's dataset with a confirmed submission's answers (workers/jobs/form-dataset-feed.ts). */
export const FORM_DATASET_FEED_QUEUE = 'form.dataset-feed';
export interface FormDatasetFeedJob {
  instance_id: number;
  submission_id: number;
}

/**
 * Looking up a recipient domain's MX for its mailbox provider (workers/jobs/provider-mx.ts): one
 * per domain acceptance meets for the first time, or whose verdict expired, enqueued with the
 * mails that met it (domain/mail/recipient-providers.ts).
 */
export const PROVIDER_MX_QUEUE = 'providers.resolve-mx';
export interface ProviderMxJob {
  domain: string;
}
