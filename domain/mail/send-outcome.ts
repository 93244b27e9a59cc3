import type { SendOutcome } from '../../engines/bounces/smtp-reply.js';
import { MailStatus } from './status.js';
import type { Move } from './transitions.js';

/** What one SMTP try of a mail comes to. */
export interface SendOutcomeDecision {
  /** The mail's move (transaction B), only from queued. */
  move: Move;
  /** false: the send job is failed so that the queue tries the mail again after its backoff. */
  jobDone: boolean;
}

/**
 * The rule that turns an SMTP reply into a mail's status: a 250 is sent, a 5xx a bounce of the
 * class the reply says, a 4xx (or no reply) deferred and tried again, until its last try, which
 * makes it a soft bounce (reason deferred_retries_exhausted). Tries are counted in SMTP tries
 * recorded on the mail (`triesBefore`, this one not included), not in job runs: a job's runs also
 * include expiries and held retries, which must not eat into a deferred mail's tries. The last
 * try is the one made with `retryLimit` tries already recorded (SEND_RETRY_LIMIT).
 */
export function decideSendOutcome(mailId: string, outcome: SendOutcome, triesBefore: number, retryLimit: number): SendOutcomeDecision {
  const log = { smtpCode: outcome.reply.code ?? null, smtpEnhanced: outcome.reply.enhanced ?? null, smtpReply: outcome.reply.text };
  // Only from queued: if another job for this mail recorded its reply first, nothing changes.
  const fields = { from: [MailStatus.queued], smtpTry: true };
  switch (outcome.kind) {
    case 'sent':
      return { move: { mailId, to: MailStatus.sent, fields, log }, jobDone: true };
    case 'bounced':
      return { move: { mailId, to: MailStatus.bounced, fields: { ...fields, bounceClass: outcome.bounceClass, bounceReason: outcome.reason }, log }, jobDone: true };
    case 'deferred':
      if (triesBefore >= retryLimit) {
        return {
          move: { mailId, to: MailStatus.bounced, fields: { ...fields, bounceClass: 'soft', bounceReason: 'expired' }, log: { ...log, reason: 'deferred_retries_exhausted' } },
          jobDone: true,
        };
      }
      return { move: { mailId, to: MailStatus.deferred, fields, log }, jobDone: false };
  }
}
