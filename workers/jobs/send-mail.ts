import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { checkGates, loadMailsToRender, lockSendStates, type RenderContext, type SendState } from '../../domain/mail/gates.js';
import type { RenderLimits } from '../../config/defaults.js';
import { renderMail, type RenderedMail } from '../../domain/mail/render.js';
import { RenderLimitExceeded } from '../../domain/mail/render-limit-exceeded.js';
import { decideSendOutcome } from '../../domain/mail/send-outcome.js';
import { FINAL_STATUSES, MailStatus } from '../../domain/mail/status.js';
import { moveMails, type Move } from '../../domain/mail/transitions.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { withTenant } from '../../domain/tenancy/context.js';
import { loadTenants } from '../../domain/tenancy/instances.js';
import { trackingSecret } from '../../domain/tracking/secret.js';
import { reportKeys } from '../../domain/bounces/report-keys.js';
import type { ReportKey } from '../../domain/bounces/report-tag.js';
import type { SmtpTransport } from '../../smtp/transport.js';
import type { Pool } from '../../sql/pool.js';
import { SEND_MAIL_QUEUE, type SendMailJob } from '../../domain/jobs.js';
import { CONFIG_SCHEMA } from '../../config/schema.js';
import type { SendSettings } from '../../config/config.js';
import type { SendLease } from '../machinery/send-lease.js';
import { OutcomeRecorder } from './outcome-recorder.js';
import { defineJob } from '../machinery/job.js';
import { softBounceNotifier } from './soft-bounce-check.js';
import { signingKeys, type SigningKey } from '../../domain/domains/dkim-keys.js';
import { configuredKeyRing, type KeyRing } from '../../domain/domains/key-encryption.js';
import type { Config } from '../../config/config.js';

/** The configured key ring, opened the first time a batch needs it (a worker whose domains have no key never reads or creates one). */
function lazyKeyRing(config: Config): () => KeyRing {
  let ring: KeyRing | undefined;
  return () => (ring ??= configuredKeyRing(config));
}

/**
 * The send worker: one pg-boss job per mail (data SendMailJob), fetched in batches.
 *
 * Per batch and instance, in the tenant's transactions:
 *  R. the batch's mails and their messages are read without locks, and rendered outside any
 *     transaction (no row lock or connection is held while the CPU works), each within the
 *     render bounds (RENDER_MAX_BODY_BYTES, RENDER_MAX_MS): one that cannot be rendered in
 *     bounds is dropped in A with its reason, and the event loop is yielded between renders.
 *  A. one transaction locks the batch's mails and looks again at what it decides on; a final
 *     (sent, dropped, bounced) or on-hold mail is left alone, so a retried or duplicated job never
 *     sends a recorded 250 twice. A queued mail that a live run still has at SMTP (the send lease,
 *     workers/machinery/send-lease.ts: pg-boss retries a job that outlived its expiry even when its first
 *     run is only waiting on a slow relay) is not sent either: its job fails, to be tried again
 *     after the queue's backoff, as does a mail that became sendable while R rendered without
 *     it. Gates (domain/mail/gates.ts) may drop a mail or put it on hold; the others, with
 *     their renderings from R, are moved to queued (2), claimed by this worker (held_by, in the
 *     same move). All moves in one statement.
 *  -  each mail goes to SMTP through the process's pooled transport, concurrently.
 *  B. each reply moves its mail as soon as it arrives (domain/mail/send-outcome.ts decides the
 *     move, workers/jobs/outcome-recorder.ts writes it): sent (3), bounced (6) or deferred (5). A
 *     deferred mail's job is failed so pg-boss retries it with the queue's exponential backoff;
 *     on its last SMTP try (SEND_RETRY_LIMIT tries recorded before) it becomes a soft bounce.
 *
 * At-least-once: a worker killed after the server's 250 and before B commits leaves the mail
 * queued (2) and its job active; after SEND_JOB_EXPIRE_SECONDS pg-boss retries the job and the
 * mail is sent again. B is written at once, with no waiting for the rest of the batch: replies
 * that arrive while a write is in flight go together in the next one (group commit), so the
 * window is about one Postgres round trip per reply, plus the in-process retries of B when
 * Postgres blips. At most the mails between their 250 and that write can be sent twice.
 */
export interface SendMailDeps {
  pool: Pool;
  smtp: SmtpTransport;
  /** PUBLIC_URL: base of tracking and unsubscribe links. */
  publicUrl: string;
  logger: Logger;
  /** This process's mails at SMTP, published for the other runs' transaction A. */
  lease: SendLease;
  /** SEND_BATCH_SIZE and SEND_CONCURRENCY. */
  settings: Pick<SendSettings, 'batchSize' | 'concurrency'>;
  /** RENDER_MAX_BODY_BYTES and RENDER_MAX_MS. */
  render: RenderLimits;
  /** TRACKING_SECRET, when the operator sets it (domain/tracking/secret.ts). */
  trackingSecret: string | undefined;
  /**
   * DKIM: the key ring that opens the domains' private keys (called only when a batch has a
   * domain with a key), and RETURN_PATH_SUBDOMAIN, the host of the VERP return path under the
   * sender domain.
   */
  dkim: { ring: () => KeyRing; returnPathSubdomain: string };
}

/** The defaults of SEND_BATCH_SIZE and SEND_CONCURRENCY (why these: config/schema.ts). */
export const SEND_DEFAULTS = { batchSize: CONFIG_SCHEMA.send.batchSize.default, loops: CONFIG_SCHEMA.send.concurrency.default } as const;

/**
 * SEND_BATCH_SIZE jobs per fetch, SEND_CONCURRENCY fetch loops per process: up to their product
 * mails in flight, sharing the pool's SMTP connections and the process's Postgres pool.
 */
export async function registerSendMail(boss: PgBoss, deps: SendMailDeps): Promise<void> {
  const { batchSize, concurrency: loops } = deps.settings;
  const limits = deps.render;
  const logger = deps.logger.child({ queue: SEND_MAIL_QUEUE });
  // After a commit that recorded soft bounces, the threshold job (not this hot path) counts them.
  const recorder = new OutcomeRecorder(deps.pool, softBounceNotifier(boss, logger));
  for (let i = 0; i < loops; i++) {
    let workerId: string | undefined;
    workerId = await boss.work<unknown>(
      SEND_MAIL_QUEUE,
      { includeMetadata: true, batchSize, pollingIntervalSeconds: 0.5 },
      async (jobs) => {
        await handleBatch(boss, { ...deps, logger }, limits, recorder, jobs);
        // A full batch means more are waiting: fetch again now instead of after the poll interval.
        if (jobs.length === batchSize && workerId) boss.notifyWorker(workerId);
      },
    );
  }
}

/**
 * The send job (workers/jobs.ts lists it). It registers its own consumers: batches and several
 * fetch loops (registerSendMail above), the hot path. Its queue's policy comes from SEND_RETRY_*
 * and SEND_JOB_EXPIRE_SECONDS.
 */
export const sendMailJob = defineJob({
  name: SEND_MAIL_QUEUE,
  policy: ({ send }) => ({
    // Deferred (4xx) mails are retried with exponential backoff; after the last try the
    // mail becomes a soft bounce. SEND_RETRY_* make tests fast; defaults suit real MTAs.
    retryLimit: send.retryLimit,
    retryDelay: send.retryDelaySeconds,
    retryBackoff: true,
    // A worker killed mid-send leaves its job active; after this it is retried elsewhere. Long
    // enough for a whole batch to wait its turn for the pooled SMTP connections of a slow
    // relay (100 x 4 mails in flight over 5 connections): an expiry while a mail is still at
    // SMTP does not send it twice (workers/machinery/send-lease.ts), but costs retries.
    expireInSeconds: send.jobExpireSeconds,
  }),
  parse: (payload) => parseJobData(payload),
  async work(boss, { send, pool, config, logger }) {
    if (!send) {
      // Accepted mails wait in the queue (nothing is lost) until a worker with SMTP_URL runs.
      logger.error('SMTP_URL is not set: this worker does not send mail (mail.send jobs wait for one that does)');
      return;
    }
    await registerSendMail(boss, {
      pool,
      ...send,
      publicUrl: config.publicUrl,
      logger,
      settings: config.send,
      render: config.render,
      trackingSecret: config.trackingSecret,
      dkim: { ring: lazyKeyRing(config), returnPathSubdomain: config.domains.returnPathSubdomain },
    });
  },
});

type JobVerdict = { done: true } | { done: false; error: string };
type Job = PgBoss.JobWithMetadata<unknown>;

/**
 * Every job of the batch is settled on its own: a deferred mail fails only its job (pg-boss's
 * batch failure would retry the whole batch). Jobs not failed here are completed by pg-boss when
 * this returns (its completion only touches jobs still active).
 */
async function handleBatch(boss: PgBoss, deps: SendMailDeps, limits: RenderLimits, recorder: OutcomeRecorder, jobs: Job[]): Promise<void> {
  const verdicts = new Map<string, JobVerdict>();
  // instance -> mail -> its jobs (a duplicate job for the same mail rides along with the first)
  const groups = new Map<number, Map<string, Job[]>>();
  for (const job of jobs) {
    const data = parseJobData(job.data);
    if (!data) {
      // Retrying cannot fix a malformed payload: completed, and said loudly.
      deps.logger.error({ jobId: job.id, data: job.data }, 'malformed send job ignored');
      continue;
    }
    const mails = groups.get(data.instance_id) ?? new Map<string, Job[]>();
    groups.set(data.instance_id, mails);
    mails.set(data.mail_id, [...(mails.get(data.mail_id) ?? []), job]);
  }
  if (!groups.size) return;
  const tenants = await loadTenants(deps.pool, [...groups.keys()]);
  const secret = await trackingSecret(deps.pool, deps.trackingSecret);
  const reportKey = (await reportKeys(deps.pool)).current;

  await Promise.all(
    [...groups].map(async ([instanceId, mails]) => {
      const settle = (mailId: string, verdict: JobVerdict) => {
        for (const job of mails.get(mailId) ?? []) verdicts.set(job.id, verdict);
      };
      const tenant = tenants.get(instanceId);
      if (!tenant) {
        deps.logger.error({ instanceId, mailIds: [...mails.keys()] }, 'send jobs for an unknown instance ignored');
        return;
      }
      let toSend: Prepared[];
      try {
        const { prepared, held, changed } = await prepare(deps, tenant, { secret, reportKey }, limits, mails);
        toSend = prepared;
        for (const mailId of held) settle(mailId, { done: false, error: 'held: another run still has this mail at SMTP' });
        for (const mailId of changed) settle(mailId, { done: false, error: 'changed while the batch was rendered; tried again' });
      } catch (err) {
        deps.logger.warn({ err, instanceId }, 'could not prepare send jobs; pg-boss retries them');
        for (const mailId of mails.keys()) settle(mailId, { done: false, error: errorText(err) });
        return;
      }
      await Promise.all(
        toSend.map(async ({ mailId, rendered, dkim, job, attempts }) => {
          try {
            const outcome = await deps.smtp.send(rendered, dkim);
            // The send queue's retry limit is SEND_RETRY_LIMIT.
            const { move, jobDone } = decideSendOutcome(mailId, outcome, attempts, job.retryLimit);
            try {
              await recorder.record(tenant, move);
            } catch (err) {
              deps.logger.error({ err, mailId, outcome: outcome.kind }, 'could not record an SMTP reply; the job is retried (the mail may be sent again)');
              return settle(mailId, { done: false, error: errorText(err) });
            }
            deps.logger.debug({ mailId, outcome: outcome.kind, reply: outcome.reply.text, retryCount: job.retryCount }, 'smtp reply recorded');
            settle(mailId, jobDone ? { done: true } : { done: false, error: `deferred: ${outcome.reply.text}` });
          } finally {
            deps.lease.inFlight.delete(mailId);
          }
        }),
      );
    }),
  );
  for (const job of jobs) {
    const verdict = verdicts.get(job.id);
    if (verdict && !verdict.done) await boss.fail(SEND_MAIL_QUEUE, job.id, { message: verdict.error });
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function parseJobData(data: unknown): SendMailJob | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  if (typeof d.instance_id !== 'number' || !Number.isSafeInteger(d.instance_id) || d.instance_id <= 0) return undefined;
  if (typeof d.mail_id !== 'string' || !/^[0-9A-Za-z]{1,64}$/.test(d.mail_id)) return undefined;
  return { instance_id: d.instance_id, mail_id: d.mail_id };
}


interface Prepared {
  mailId: string;
  rendered: RenderedMail;
  /** The sender domain's DKIM key; undefined for a domain without one (sent unsigned). */
  dkim: SigningKey | undefined;
  job: Job;
  /** SMTP tries recorded before this one. */
  attempts: number;
}

interface Preparation {
  prepared: Prepared[];
  /** Queued mails another live run has at SMTP: neither sent nor moved here. */
  held: string[];
  /** Mails that became sendable after R read them (so were not rendered): neither sent nor moved. */
  changed: string[];
}

/** The keys a rendering signs with: tracking links, and the tag of the return path and identity. */
interface SigningKeys {
  secret: string;
  reportKey: ReportKey;
}

/** R, then transaction A, for one instance's mails of the batch. */
async function prepare(deps: SendMailDeps, tenant: Tenant, keys: SigningKeys, limits: RenderLimits, mails: Map<string, Job[]>): Promise<Preparation> {
  const mailIds = [...mails.keys()];
  const contexts = await withTenant(deps.pool, tenant, (c) => loadMailsToRender(tenant, c, mailIds));
  if (contexts.length < mails.size) {
    const found = new Set(contexts.map((x) => x.mail_id));
    const missing = mailIds.filter((id) => !found.has(id));
    deps.logger.warn({ instanceId: tenant.instanceId, mailIds: missing }, 'send jobs for mails that do not exist (purged?) ignored');
  }
  // Every outgoing mail is signed with its sender domain's key (domain/domains/dkim-keys.ts).
  const domains = [...new Set(contexts.flatMap((x) => (x.domain_name ? [x.domain_name] : [])))];
  const signers = await signingKeys(tenant, deps.pool, deps.dkim.ring, domains);
  const renderings = await renderBatch(deps, keys, limits, contexts, signers);
  const listed: string[] = [];
  try {
    return await moveRendered(deps, tenant, mails, renderings, listed);
  } catch (err) {
    // Rolled back: none of these became queued by this run, so none is at SMTP.
    for (const mailId of listed) deps.lease.inFlight.delete(mailId);
    throw err;
  }
}

/** A mail rendered in R, with the sender domain it was rendered for; or why it could not be. */
type Rendering = { ok: true; rendered: RenderedMail; domain: string | null; dkim: SigningKey | undefined } | { ok: false; error: unknown };

/** A run of renders longer than this yields to the event loop (SMTP replies, leases, the inbound listener). */
const RENDER_SLICE_MS = 20;

/**
 * R: renders the mails A may send, outside any transaction. A final or on-hold mail is not
 * rendered (A leaves it alone). When one mail of a message runs over the time bound, the
 * message's other mails in the batch are not tried: they would cost as much for the same answer.
 */
async function renderBatch(
  deps: SendMailDeps,
  keys: SigningKeys,
  limits: RenderLimits,
  contexts: RenderContext[],
  signers: Map<string, SigningKey>,
): Promise<Map<string, Rendering>> {
  const renderings = new Map<string, Rendering>();
  const tooSlow = new Map<number, string>();
  let slice = performance.now();
  for (const ctx of contexts) {
    if (FINAL_STATUSES.includes(ctx.status) || ctx.status === MailStatus.onhold) continue;
    if (performance.now() - slice > RENDER_SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    const slow = tooSlow.get(ctx.message_id);
    if (slow) {
      renderings.set(ctx.mail_id, { ok: false, error: new RenderLimitExceeded(`not tried after another mail of its message: ${slow}`) });
      continue;
    }
    const started = performance.now();
    try {
      const rendered = renderMail(
        {
          mailId: ctx.mail_id,
          senderDomain: ctx.domain_name!,
          returnPathDomain: `${deps.dkim.returnPathSubdomain}.${ctx.domain_name!}`,
          publicUrl: deps.publicUrl,
          secret: keys.secret,
          reportKey: keys.reportKey,
          from: { email: ctx.from_email, name: ctx.from_name },
          to: { email: ctx.to_email, name: ctx.to_name, variables: ctx.recipient_variables },
          subject: ctx.subject,
          html: ctx.html,
          text: ctx.text_body,
          variables: ctx.variables,
          replyTo: ctx.reply_to,
          headers: ctx.headers,
          attachments: ctx.attachments,
          trackOpens: ctx.track_opens,
          trackClicks: ctx.track_clicks,
        },
        limits,
      );
      renderings.set(ctx.mail_id, { ok: true, rendered, domain: ctx.domain_name, dkim: ctx.domain_name ? signers.get(ctx.domain_name) : undefined });
    } catch (err) {
      renderings.set(ctx.mail_id, { ok: false, error: err });
      if (err instanceof RenderLimitExceeded && performance.now() - started > limits.maxMs) tooSlow.set(ctx.message_id, err.message);
    }
  }
  return renderings;
}

/**
 * Another worker's live run has the mail, or one of this process's runs still does (a run of
 * this process that ended without recording its reply no longer has it: the mail is sent again).
 */
function isHeld(deps: SendMailDeps, state: SendState): boolean {
  return state.held_by_live_worker && (state.held_by !== deps.lease.workerId || deps.lease.inFlight.has(state.mail_id));
}

/** Transaction A: the mails locked and looked at again, gates, and the moves (queued and claimed, or not sent). */
async function moveRendered(deps: SendMailDeps, tenant: Tenant, mails: Map<string, Job[]>, renderings: Map<string, Rendering>, listed: string[]): Promise<Preparation> {
  return withTenant(deps.pool, tenant, async (c) => {
    const states = await lockSendStates(tenant, c, [...mails.keys()], deps.lease.holdSeconds);
    const moves: Move[] = [];
    const prepared: Prepared[] = [];
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
      prepared.push({ mailId, rendered: rendering.rendered, dkim: rendering.dkim, job: mails.get(mailId)![0]!, attempts: state.attempts });
      // Before the commit that makes the mail queued: this process's other runs see it at once.
      deps.lease.inFlight.add(mailId);
      listed.push(mailId);
      // Claimed in the commit that makes it queued: no run can see it queued and unclaimed.
      moves.push({ mailId, to: MailStatus.queued, fields: { heldBy: deps.lease.workerId }, log: { reason: 'handed_to_smtp', attempt: state.attempts + 1 } });
    }
    await moveMails(tenant, c, moves);
    return { prepared, held, changed };
  });
}
