import type { SigningKey } from '../../../domain/domains/dkim-keys.js';
import { checkGates, lockSendStates, type SendState } from '../../../domain/mail/gates.js';
import type { RenderedMail } from '../../../domain/mail/render.js';
import { RenderLimitExceeded } from '../../../engines/html/render-limit-exceeded.js';
import { FINAL_STATUSES, MailStatus } from '../../../domain/mail/status.js';
import { moveMails, type Move } from '../../../domain/mail/transitions.js';
import { withTenant, type Tenant } from '../../../domain/tenancy/context.js';
import type { SendLease } from '../../machinery/send-lease.js';
import type { InstanceMails, SendJob, SendMailDeps } from './deps.js';
import type { Rendering } from './render.js';
import { errorText } from './verdicts.js';

/*
 * Step A of a send batch (workers/jobs/send-mail/index.ts): one transaction locks the batch's
 * mails and looks again at what it decides on. A final (sent, dropped, bounced) or on-hold mail
 * is left alone, so a retried or duplicated job never sends a recorded 250 twice. A queued mail
 * that a live run still has at SMTP (the send lease, workers/machinery/send-lease.ts: pg-boss
 * retries a job that outlived its expiry even when its first run is only waiting on a slow
 * relay) is not sent either: its job fails, to be tried again after the queue's backoff, as does
 * a mail that became sendable while R rendered without it. Gates (domain/mail/gates.ts) may drop
 * a mail or put it on hold; the others, with their renderings from R, are moved to queued (2),
 * claimed by this worker (held_by, in the same move). All moves in one statement.
 *
 * The lease's in-process half is taken here (before the commit) and given back by releaseLease
 * once the mail's reply is recorded, or at once if the transaction rolls back.
 */

/** A mail claimed for SMTP: queued, held by this worker, in the lease. */
export interface Claimed {
  mailId: string;
  rendered: RenderedMail;
  /** The sender domain's DKIM key; undefined for a domain without one (sent unsigned). */
  dkim: SigningKey | undefined;
  job: SendJob;
  /** SMTP tries recorded before this one. */
  attempts: number;
}

export interface Claim {
  claimed: Claimed[];
  /** Queued mails another live run has at SMTP: neither sent nor moved here. */
  held: string[];
  /** Mails that became sendable after R read them (so were not rendered): neither sent nor moved. */
  changed: string[];
}

/** Transaction A for one instance's mails of the batch, with their renderings from R. */
export async function claimMails(deps: SendMailDeps, tenant: Tenant, mails: InstanceMails, renderings: Map<string, Rendering>): Promise<Claim> {
  const listed: string[] = [];
  try {
    return await lockGateAndMove(deps, tenant, mails, renderings, listed);
  } catch (err) {
    // Rolled back: none of these became queued by this run, so none is at SMTP.
    for (const mailId of listed) releaseLease(deps.lease, mailId);
    throw err;
  }
}

/**
 * The mail's reply is recorded (or could not be): this process's runs no longer have it at SMTP,
 * so a retry of its job may send it (workers/machinery/send-lease.ts).
 */
export function releaseLease(lease: SendLease, mailId: string): void {
  lease.inFlight.delete(mailId);
}

/**
 * Another worker's live run has the mail, or one of this process's runs still does (a run of
 * this process that ended without recording its reply no longer has it: the mail is sent again).
 */
function isHeld(deps: SendMailDeps, state: SendState): boolean {
  return state.held_by_live_worker && (state.held_by !== deps.lease.workerId || deps.lease.inFlight.has(state.mail_id));
}

/** The mails locked and looked at again, gates, and the moves (queued and claimed, or not sent); `listed` gets each mail put in the lease. */
async function lockGateAndMove(deps: SendMailDeps, tenant: Tenant, mails: InstanceMails, renderings: Map<string, Rendering>, listed: string[]): Promise<Claim> {
  return withTenant(deps.pool, tenant, async (c) => {
    const states = await lockSendStates(tenant, c, [...mails.keys()], deps.lease.holdSeconds);
    const moves: Move[] = [];
    const claimed: Claimed[] = [];
    const held: string[] = [];
    const changed: string[] = [];
    for (const state of states) {
      const mailId = state.mail_id;
      if (FINAL_STATUSES.includes(state.status) || state.status === MailStatus.onhold) continue;
      if (isHeld(deps, state)) {
        deps.logger.warn({ mailId }, 'send job retried while another run still has its mail at SMTP; not sent again');
        held.push(mailId);
        continue;
      }
      const rendering = renderings.get(mailId);
      // Skipped by R (final or on hold then), or its sender's domain changed since: not rendered for what is sent now.
      if (!rendering || (rendering.ok && rendering.domain !== state.domain_name)) {
        changed.push(mailId);
        continue;
      }
      // A mail that cannot be rendered claims no quota: it will not be sent.
      const verdict = await checkGates(tenant, c, state, { claimQuota: rendering.ok && state.status === MailStatus.received });
      if (!verdict.pass) {
        moves.push({ mailId, to: verdict.to, log: { reason: verdict.reason } });
        continue;
      }
      if (!rendering.ok) {
        // Templates are checked at acceptance; a mail that still cannot render (or not within the
        // render bounds) would fail every retry the same way, so it is dropped with the reason
        // rather than left in limbo.
        const err = rendering.error;
        if (err instanceof RenderLimitExceeded) deps.logger.warn({ mailId, reason: err.message }, 'mail could not be rendered within the render bounds; dropped');
        else deps.logger.error({ err, mailId }, 'mail could not be rendered; dropped');
        moves.push({ mailId, to: MailStatus.dropped, log: { reason: `render_failed: ${errorText(err).split('\n')[0]}`.slice(0, 500) } });
        continue;
      }
      claimed.push({ mailId, rendered: rendering.rendered, dkim: rendering.dkim, job: mails.get(mailId)![0]!, attempts: state.attempts });
      // Before the commit that makes the mail queued: this process's other runs see it at once.
      deps.lease.inFlight.add(mailId);
      listed.push(mailId);
      // Claimed in the commit that makes it queued: no run can see it queued and unclaimed.
      moves.push({ mailId, to: MailStatus.queued, fields: { heldBy: deps.lease.workerId }, log: { reason: 'handed_to_smtp', attempt: state.attempts + 1 } });
    }
    await moveMails(tenant, c, moves);
    return { claimed, held, changed };
  });
}
