import { SEND_MAIL_QUEUE } from '../domain/jobs.js';
import type { SendSettings } from '../runtime/config.js';

/**
 * Every pg-boss queue and its policy, created by the release step (runtime/queue.ts) so web
 * dynos can enqueue in their own transactions without DDL. One place for retry settings.
 */
export interface QueueDef {
  name: string;
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
  policy?: 'standard' | 'short' | 'singleton' | 'stately';
}


/**
 * The soft-bounce threshold job: one per instance with new soft bounces. Data: SoftBouncesJob,
 * sent with singletonKey = the instance id. Policy short: at most one job per instance waits in
 * the queue, so a burst of bounces makes one job; one may wait while another runs, so bounces
 * recorded during a run are not missed (the evaluation itself is safe to run twice at once).
 */
export const SOFT_BOUNCES_QUEUE = 'restrictions.soft-bounces';
export interface SoftBouncesJob {
  instance_id: number;
}
/** The minute sweep that enqueues the threshold job for every instance with unevaluated soft bounces. */
export const SOFT_BOUNCES_SWEEP_QUEUE = 'restrictions.soft-bounces-sweep';

/** The queues, with the send queue's policy from SEND_RETRY_* and SEND_JOB_EXPIRE_SECONDS. */
export function queueDefs(send: Pick<SendSettings, 'retryLimit' | 'retryDelaySeconds' | 'jobExpireSeconds'>): QueueDef[] {
  return [
    { name: 'worker.heartbeat', policy: 'singleton' },
    { name: 'mail.release-onhold', policy: 'singleton' },
    { name: 'mail.retention', policy: 'singleton' },
    { name: SOFT_BOUNCES_QUEUE, policy: 'short', retryLimit: 5, retryDelay: 30, retryBackoff: true, expireInSeconds: 600 },
    { name: SOFT_BOUNCES_SWEEP_QUEUE, policy: 'singleton' },
    {
      name: SEND_MAIL_QUEUE,
      // Deferred (4xx) mails are retried with exponential backoff; after the last try the
      // mail becomes a soft bounce. SEND_RETRY_* make tests fast; defaults suit real MTAs.
      retryLimit: send.retryLimit,
      retryDelay: send.retryDelaySeconds,
      retryBackoff: true,
      // A worker killed mid-send leaves its job active; after this it is retried elsewhere. Long
      // enough for a whole batch to wait its turn for the pooled SMTP connections of a slow
      // relay (100 x 4 mails in flight over 5 connections): an expiry while a mail is still at
      // SMTP does not send it twice (workers/send-lease.ts), but costs retries.
      expireInSeconds: send.jobExpireSeconds,
    },
  ];
}
