import type { SendOutcome } from '../../../engines/bounces/smtp-reply.js';
import { decideSendOutcome, type RetryPolicy } from '../../../domain/mail/send-outcome.js';
import { MailStatus } from '../../../domain/mail/status.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import { LOOK_AGAIN_MS, type Claimed } from './claim.js';
import type { SendMailDeps } from './deps.js';
import type { OutcomeRecorder } from './outcome-recorder.js';

/**
 * Step B of a send batch (workers/jobs/send-mail/index.ts): each reply moves its mail as soon as
 * it arrives (domain/mail/send-outcome.ts decides the move, outcome-recorder.ts writes it, with
 * the replies that arrive meanwhile): sent (3), bounced (6) or deferred (5). Written at once,
 * because a worker killed between the server's 250 and this write leaves the mail queued, to be
 * sent again by the job's retry. A deferred mail gets its next try on its row (next_attempt_at,
 * the retry schedule counted from its deferral, with the batch's `jitter`), and the batch a job
 * for then (rounded up to the second, so the batch's deferrals share a few jobs); on its last SMTP try
 * (SEND_RETRY_LIMIT tries recorded before) it becomes a soft bounce. The answer: when the mail is
 * to be looked at again, or undefined when nothing more is to be done for it here.
 */
export async function recordOutcome(
  deps: SendMailDeps,
  recorder: OutcomeRecorder,
  tenant: Tenant,
  mail: Claimed,
  outcome: SendOutcome,
  policy: RetryPolicy,
  jitter: number,
): Promise<Date | undefined> {
  const { mailId } = mail;
  const { move } = decideSendOutcome(mailId, outcome, mail.attempts, policy, jitter);
  let moved;
  try {
    moved = await recorder.record(tenant, move);
  } catch (err) {
    deps.logger.error({ err, mailId, outcome: outcome.kind }, 'could not record an SMTP reply; the mail is tried again shortly (it may be sent again)');
    return new Date(Date.now() + LOOK_AGAIN_MS);
  }
  deps.logger.debug({ mailId, outcome: outcome.kind, reply: outcome.reply.text, tries: mail.attempts + 1 }, 'smtp reply recorded');
  if (moved?.status !== MailStatus.deferred || !moved.next_attempt_at) return undefined;
  return new Date(Math.ceil(moved.next_attempt_at.getTime() / 1000) * 1000);
}
