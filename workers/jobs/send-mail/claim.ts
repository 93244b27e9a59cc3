import type { SigningKey } from '../../../domain/domains/dkim-keys.js';
import { checkGates, claimMonthlyQuota, lockSendStates, QUOTA_HOLD_REASON, type SendState } from '../../../domain/mail/gates.js';
import type { RenderedMail } from '../../../domain/mail/render.js';
import { RenderLimitExceeded } from '../../../engines/html/render-limit-exceeded.js';
import { FINAL_STATUSES, MailStatus } from '../../../domain/mail/status.js';
import { moveMails, type Move } from '../../../domain/mail/transitions.js';
import { withTenant, type Tenant } from '../../../domain/tenancy/context.js';
import type { SendLease } from '../../machinery/send-lease.js';
import type { SendMailDeps } from './deps.js';
import type { Rendering } from './render.js';

/*
 * Step A of a send batch (workers/jobs/send-mail/index.ts): one transaction locks the batch's
 * mails and looks again at what it decides on. A final (sent, dropped, bounced) or on-hold mail
 * is left alone, so a retried or duplicated job never sends a recorded 250 twice. A deferred mail
 * whose next try has not come (a duplicate job, or an old job retried after its expiry) is left
 * for then. A queued mail that a live run still has at SMTP (the send lease,
 * workers/machinery/send-lease.ts: pg-boss retries a job that outlived its expiry even when its
 * first run is only waiting on a slow relay) is not sent either, nor a mail that became sendable
 * while R rendered without it: both are tried again shortly (`later`). Gates
 * (domain/mail/gates.ts) may drop a mail; the batch's quota is claimed in one go, and the mails
 * past it wait on hold; the others, with their renderings from R, are moved to queued (2),
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
  /** SMTP tries recorded before this one. */
  attempts: number;
}

/** An error as the reason of a mail dropped because it cannot be rendered. */
function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A mail neither sent nor moved by this run, to be looked at again at `at`. */
export interface Later {
  mailId: string;
  at: Date;
}

export interface Claim {
  claimed: Claimed[];
  /**
   * Queued mails another live run has at SMTP, mails that became sendable after R read them (so
   * were not rendered), deferred mails whose next try has not come.
   */
  later: Later[];
}

/**
 * How soon a mail that changed while it was rendered (or whose batch failed to prepare, or whose
 * reply could not be recorded) is looked at again.
 */
export const LOOK_AGAIN_MS = 2_000;
/**
 * How soon a mail another live run has at SMTP is looked at again: that run may wait minutes on a
 * slow or mute relay (docs/operations.md), and each look is a job.
 */
export const HELD_LOOK_AGAIN_MS = 10_000;

/** Transaction A for one instance's mails of the batch, with their renderings from R. */
export async function claimMails(deps: SendMailDeps, tenant: Tenant, mails: readonly string[], renderings: Map<string, Rendering>): Promise<Claim> {
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
async function lockGateAndMove(deps: SendMailDeps, tenant: Tenant, mails: readonly string[], renderings: Map<string, Rendering>, listed: string[]): Promise<Claim> {
  return withTenant(deps.pool, tenant, async (c) => {
    const states = await lockSendStates(tenant, c, mails, deps.lease.holdSeconds);
    const moves: Move[] = [];
    const sendable: Array<{ state: SendState; rendering: Extract<Rendering, { ok: true }> }> = [];
    const later: Later[] = [];
    const soon = new Date(Date.now() + LOOK_AGAIN_MS);
    const afterHold = new Date(Date.now() + HELD_LOOK_AGAIN_MS);
    const gated: Array<{ state: SendState; rendering: Rendering }> = [];
    for (const state of states) {
      const mailId = state.mail_id;
      if (FINAL_STATUSES.includes(state.status) || state.status === MailStatus.onhold) continue;
      if (!state.due) {
        later.push({ mailId, at: state.next_attempt_at! });
        continue;
      }
      if (isHeld(deps, state)) {
        deps.logger.warn({ mailId }, 'send job retried while another run still has its mail at SMTP; not sent again');
        later.push({ mailId, at: afterHold });
        continue;
      }
      const rendering = renderings.get(mailId);
      // Skipped by R (final, on hold or not due then), or its sender's domain changed since: not rendered for what is sent now.
      if (!rendering || (rendering.ok && rendering.domain !== state.domain_name)) {
        later.push({ mailId, at: soon });
        continue;
      }
      gated.push({ state, rendering });
    }
    // The gates for all of them at once (the consent reads in one call).
    const verdicts = await checkGates(tenant, c, gated.map((g) => g.state));
    for (const { state, rendering } of gated) {
      const mailId = state.mail_id;
      const verdict = verdicts.get(mailId)!;
      if (!verdict.pass) {
        moves.push({ mailId, to: verdict.to, log: { reason: verdict.reason } });
        continue;
      }
      if (!rendering.ok) {
        // Templates are checked at acceptance; a mail that still cannot render (or not within the
        // render bounds) would fail every retry the same way, so it is dropped with the reason
        // rather than left in limbo. It claims no quota: it will not be sent.
        const err = rendering.error;
        if (err instanceof RenderLimitExceeded) deps.logger.warn({ mailId, reason: err.message }, 'mail could not be rendered within the render bounds; dropped');
        else deps.logger.error({ err, mailId }, 'mail could not be rendered; dropped');
        moves.push({ mailId, to: MailStatus.dropped, log: { reason: `render_failed: ${errorText(err).split('\n')[0]}`.slice(0, 500) } });
        continue;
      }
      sendable.push({ state, rendering });
    }
    // The quota, for the batch's first passes at once (a retried mail has its unit), in mail order.
    const quota = states[0]?.monthly_quota ?? null;
    const firstPasses = sendable.filter(({ state }) => state.status === MailStatus.received).length;
    let units = quota === null ? Infinity : await claimMonthlyQuota(tenant, c, quota, firstPasses);
    const claimed: Claimed[] = [];
    for (const { state, rendering } of sendable) {
      const mailId = state.mail_id;
      if (state.status === MailStatus.received && units-- <= 0) {
        moves.push({ mailId, to: MailStatus.onhold, log: { reason: QUOTA_HOLD_REASON } });
        continue;
      }
      claimed.push({ mailId, rendered: rendering.rendered, dkim: rendering.dkim, attempts: state.attempts });
      // Before the commit that makes the mail queued: this process's other runs see it at once.
      deps.lease.inFlight.add(mailId);
      listed.push(mailId);
      // Claimed in the commit that makes it queued: no run can see it queued and unclaimed.
      moves.push({ mailId, to: MailStatus.queued, fields: { heldBy: deps.lease.workerId }, log: { reason: 'handed_to_smtp', attempt: state.attempts + 1 } });
    }
    await moveMails(tenant, c, moves);
    return { claimed, later };
  });
}
