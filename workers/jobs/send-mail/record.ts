import type { SendOutcome } from '../../../engines/bounces/smtp-reply.js';
import { decideSendOutcome } from '../../../domain/mail/send-outcome.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import type { Claimed } from './claim.js';
import type { SendMailDeps } from './deps.js';
import type { OutcomeRecorder } from './outcome-recorder.js';
import { errorText, type JobVerdict } from './verdicts.js';

/**
 * Step B of a send batch (workers/jobs/send-mail/index.ts): each reply moves its mail as soon as
 * it arrives (domain/mail/send-outcome.ts decides the move, outcome-recorder.ts writes it, with
 * the replies that arrive meanwhile): sent (3), bounced (6) or deferred (5). Written at once,
 * because a worker killed between the server's 250 and this write leaves the mail queued, to be
 * sent again by the job's retry. A deferred mail's job is failed so pg-boss retries it with the
 * queue's exponential backoff; on its last SMTP try (SEND_RETRY_LIMIT tries recorded before) it
 * becomes a soft bounce. The verdict says what becomes of the mail's jobs.
 */
export async function recordOutcome(deps: SendMailDeps, recorder: OutcomeRecorder, tenant: Tenant, mail: Claimed, outcome: SendOutcome): Promise<JobVerdict> {
  const { mailId, job } = mail;
  // The send queue's retry limit is SEND_RETRY_LIMIT.
  const { move, jobDone } = decideSendOutcome(mailId, outcome, mail.attempts, job.retryLimit);
  try {
    await recorder.record(tenant, move);
  } catch (err) {
    deps.logger.error({ err, mailId, outcome: outcome.kind }, 'could not record an SMTP reply; the job is retried (the mail may be sent again)');
    return { done: false, error: errorText(err) };
  }
  deps.logger.debug({ mailId, outcome: outcome.kind, reply: outcome.reply.text, retryCount: job.retryCount }, 'smtp reply recorded');
  return jobDone ? { done: true } : { done: false, error: `deferred: ${outcome.reply.text}` };
}
