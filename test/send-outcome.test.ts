import t from 'tap';
import { decideSendOutcome, retryDelaySeconds } from '../domain/mail/send-outcome.js';
import type { SendOutcome } from '../engines/bounces/smtp-reply.js';
import { MailStatus } from '../domain/mail/status.js';

/**
 * The SMTP reply -> mail status rule (domain/mail/send-outcome.ts), row by row: every outcome
 * kind, before, at and past the retry limit. The worker tests (send-worker, send-retry-budget,
 * soft-bounces) show the same rule end to end against a real SMTP server and Postgres.
 */

const sent: SendOutcome = { kind: 'sent', reply: { code: 250, text: '250 2.0.0 OK queued' } };
const hard: SendOutcome = { kind: 'bounced', bounceClass: 'hard', reason: 'userunknown', reply: { code: 550, enhanced: '5.1.1', text: '550 5.1.1 no such user' } };
const soft: SendOutcome = { kind: 'bounced', bounceClass: 'soft', reason: 'mailboxfull', reply: { code: 552, enhanced: '5.2.2', text: '552 5.2.2 mailbox full' } };
const deferred: SendOutcome = { kind: 'deferred', reply: { code: 451, enhanced: '4.7.1', text: '451 4.7.1 try later' } };
const noReply: SendOutcome = { kind: 'deferred', reply: { text: 'connect ECONNREFUSED 127.0.0.1:2525' } };

const LIMIT = 3;

const rows: Array<{
  name: string;
  outcome: SendOutcome;
  triesBefore: number;
  /** SEND_RETRY_LIMIT; LIMIT unless given. */
  limit?: number;
  to: number;
  bounceClass?: 'hard' | 'soft';
  reason?: string;
  /** Deferred with tries left: tried again after the backoff of its try, written on the mail. */
  retried: boolean;
}> = [
  { name: 'sent on the first try', outcome: sent, triesBefore: 0, to: MailStatus.sent, retried: false },
  { name: 'sent on the last try', outcome: sent, triesBefore: LIMIT, to: MailStatus.sent, retried: false },
  { name: 'hard bounce', outcome: hard, triesBefore: 0, to: MailStatus.bounced, bounceClass: 'hard', retried: false },
  { name: 'hard bounce on the last try', outcome: hard, triesBefore: LIMIT, to: MailStatus.bounced, bounceClass: 'hard', retried: false },
  { name: 'soft bounce', outcome: soft, triesBefore: 1, to: MailStatus.bounced, bounceClass: 'soft', retried: false },
  { name: 'deferred, tries left', outcome: deferred, triesBefore: 0, to: MailStatus.deferred, retried: true },
  { name: 'deferred, one try left', outcome: deferred, triesBefore: LIMIT - 1, to: MailStatus.deferred, retried: true },
  { name: 'no reply (connection error), tries left', outcome: noReply, triesBefore: 1, to: MailStatus.deferred, retried: true },
  {
    name: 'deferred on the last try',
    outcome: deferred,
    triesBefore: LIMIT,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    retried: false,
  },
  {
    name: 'deferred past the limit (a limit lowered since)',
    outcome: deferred,
    triesBefore: LIMIT + 2,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    retried: false,
  },
  {
    name: 'no reply on the last try',
    outcome: noReply,
    triesBefore: LIMIT,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    retried: false,
  },
  {
    name: 'deferred with no retries allowed',
    outcome: deferred,
    triesBefore: 0,
    limit: 0,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    retried: false,
  },
];

for (const row of rows) {
  t.test(row.name, async (t) => {
    const policy = { limit: row.limit ?? LIMIT, delaySeconds: 60 };
    const { move } = decideSendOutcome('m1', row.outcome, row.triesBefore, policy, 0.25);
    const reply = row.outcome.reply;
    t.same(move, {
      mailId: 'm1',
      to: row.to,
      // Only from queued, and it counts as an SMTP try.
      // A bounce carries its reason: the reply's (engines/bounces/reason.ts), or expired when the tries ran out.
      fields: {
        from: [MailStatus.queued],
        smtpTry: true,
        ...(row.bounceClass ? { bounceClass: row.bounceClass, bounceReason: row.outcome.kind === 'bounced' ? row.outcome.reason : 'expired' } : {}),
        // The backoff of this try (the tries recorded with it), with the batch's jitter.
        ...(row.retried ? { retryInSeconds: retryDelaySeconds(policy, row.triesBefore + 1, 0.25) } : {}),
      },
      log: { smtpCode: reply.code ?? null, smtpEnhanced: reply.enhanced ?? null, smtpReply: reply.text, ...(row.reason ? { reason: row.reason } : {}) },
    });
  });
}

t.test('the retry schedule: the delay doubles at each try, times 1 to 2 by the jitter', async (t) => {
  const policy = { limit: 6, delaySeconds: 60 };
  t.equal(retryDelaySeconds(policy, 1, 0), 60, 'after the first try: the delay');
  t.equal(retryDelaySeconds(policy, 2, 0), 120, 'after the second: twice');
  t.equal(retryDelaySeconds(policy, 3, 0.5), 360, 'after the third, jitter 0.5: 240 s x 1.5');
  t.equal(retryDelaySeconds({ limit: 6, delaySeconds: 0 }, 4, 0.9), 0, 'no delay configured: at once');
  t.equal(retryDelaySeconds(policy, 40, 0), 60 * 2 ** 16, 'the doubling stops at 2^16');
});
