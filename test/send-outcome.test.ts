import t from 'tap';
import { decideSendOutcome } from '../domain/mail/send-outcome.js';
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
  jobDone: boolean;
}> = [
  { name: 'sent on the first try', outcome: sent, triesBefore: 0, to: MailStatus.sent, jobDone: true },
  { name: 'sent on the last try', outcome: sent, triesBefore: LIMIT, to: MailStatus.sent, jobDone: true },
  { name: 'hard bounce', outcome: hard, triesBefore: 0, to: MailStatus.bounced, bounceClass: 'hard', jobDone: true },
  { name: 'hard bounce on the last try', outcome: hard, triesBefore: LIMIT, to: MailStatus.bounced, bounceClass: 'hard', jobDone: true },
  { name: 'soft bounce', outcome: soft, triesBefore: 1, to: MailStatus.bounced, bounceClass: 'soft', jobDone: true },
  { name: 'deferred, tries left', outcome: deferred, triesBefore: 0, to: MailStatus.deferred, jobDone: false },
  { name: 'deferred, one try left', outcome: deferred, triesBefore: LIMIT - 1, to: MailStatus.deferred, jobDone: false },
  { name: 'no reply (connection error), tries left', outcome: noReply, triesBefore: 1, to: MailStatus.deferred, jobDone: false },
  {
    name: 'deferred on the last try',
    outcome: deferred,
    triesBefore: LIMIT,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    jobDone: true,
  },
  {
    name: 'deferred past the limit (a limit lowered since)',
    outcome: deferred,
    triesBefore: LIMIT + 2,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    jobDone: true,
  },
  {
    name: 'no reply on the last try',
    outcome: noReply,
    triesBefore: LIMIT,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    jobDone: true,
  },
  {
    name: 'deferred with no retries allowed',
    outcome: deferred,
    triesBefore: 0,
    limit: 0,
    to: MailStatus.bounced,
    bounceClass: 'soft',
    reason: 'deferred_retries_exhausted',
    jobDone: true,
  },
];

for (const row of rows) {
  t.test(row.name, async (t) => {
    const { move, jobDone } = decideSendOutcome('m1', row.outcome, row.triesBefore, row.limit ?? LIMIT);
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
      },
      log: { smtpCode: reply.code ?? null, smtpEnhanced: reply.enhanced ?? null, smtpReply: reply.text, ...(row.reason ? { reason: row.reason } : {}) },
    });
    t.equal(jobDone, row.jobDone, 'job verdict');
  });
}
