import type { SendOutcome } from '../../engines/bounces/smtp-reply.js';
import { MailStatus } from './status.js';
import type { Move } from './transitions.js';

/** What one SMTP try of a mail comes to: the mail's move (transaction B), only from queued. */
export interface SendOutcomeDecision {
  move: Move;
}

/** SEND_RETRY_LIMIT and SEND_RETRY_DELAY_SECONDS. */
export interface RetryPolicy {
  limit: number;
  delaySeconds: number;
}

/**
 * How long after its deferral a mail deferred on its `tries`-th SMTP try is tried again:
 * SEND_RETRY_DELAY_SECONDS doubled at each try, times 1 to 2 (`jitter` in [0, 1)), the backoff
 * pg-boss applied to the one-mail jobs before issue 42 (its `retryBackoff`), so the schedule
 * integrators see is the same. The worker draws one `jitter` per batch.
 */
export function retryDelaySeconds(policy: RetryPolicy, tries: number, jitter: number): number {
  return policy.delaySeconds * 2 ** Math.min(16, Math.max(0, tries - 1)) * (1 + jitter);
}

/**
 * The rule that turns an SMTP reply into a mail's status: a 250 is sent, a 5xx a bounce of the
 * class the reply says, a 4xx (or no reply) deferred and tried again, until its last try, which
 * makes it a soft bounce (reason deferred_retries_exhausted). Tries are counted in SMTP tries
 * recorded on the mail (`triesBefore`, this one not included), not in job runs: a job's runs also
 * include expiries and held retries, which must not eat into a deferred mail's tries. The last
 * try is the one made with `policy.limit` tries already recorded (SEND_RETRY_LIMIT). A deferred
 * mail's move carries when it is tried again (retryDelaySeconds above, with the batch's `jitter`).
 */
export function decideSendOutcome(mailId: string, outcome: SendOutcome, triesBefore: number, policy: RetryPolicy, jitter: number): SendOutcomeDecision {
  const log = { smtpCode: outcome.reply.code ?? null, smtpEnhanced: outcome.reply.enhanced ?? null, smtpReply: outcome.reply.text };
  // Only from queued: if another job for this mail recorded its reply first, nothing changes.
  const fields = { from: [MailStatus.queued], smtpTry: true };
  switch (outcome.kind) {
    case 'sent':
      return { move: { mailId, to: MailStatus.sent, fields, log } };
    case 'bounced':
      return { move: { mailId, to: MailStatus.bounced, fields: { ...fields, bounceClass: outcome.bounceClass, bounceReason: outcome.reason }, log } };
    case 'deferred':
      if (triesBefore >= policy.limit) {
        return {
          move: { mailId, to: MailStatus.bounced, fields: { ...fields, bounceClass: 'soft', bounceReason: 'expired' }, log: { ...log, reason: 'deferred_retries_exhausted' } },
        };
      }
      return { move: { mailId, to: MailStatus.deferred, fields: { ...fields, retryInSeconds: retryDelaySeconds(policy, triesBefore + 1, jitter) }, log } };
  }
}
