import type { Client } from '../sql/pool.js';

/**
 * Enqueue jobs inside the caller's transaction (pg-boss's `db` option), so a business write and
 * its jobs commit together or not at all. Implemented over pg-boss in runtime/queue.ts.
 */
export interface JobQueue {
  insert(client: Client, jobs: Array<{ name: string; data: object }>): Promise<void>;
}

/**
 * The send job: one per mail, enqueued with the mail's row by acceptance (accept.ts) and by the
 * on-hold release (onhold.ts), consumed by the send worker (workers/send-mail.ts). Its queue's
 * retry policy is in workers/queues.ts.
 */
export const SEND_MAIL_QUEUE = 'mail.send';
export interface SendMailJob {
  instance_id: number;
  mail_id: string;
}
