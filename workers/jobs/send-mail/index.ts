import type PgBoss from 'pg-boss';
import { configuredKeyRing, type KeyRing } from '../../../domain/domains/key-encryption.js';
import { SEND_JOB_MAILS, SEND_MAIL_QUEUE } from '../../../domain/job-queue.js';
import type { RetryPolicy } from '../../../domain/mail/send-outcome.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import { CONFIG_SCHEMA } from '../../../config/schema.js';
import type { Config } from '../../../config/config.js';
import { CONSUMER_STOP_GRACE_MS, consumeJobs } from '../../machinery/job-consumer.js';
import { defineJob } from '../../machinery/job.js';
import { WeightedSlots } from '../../machinery/weighted-slots.js';
import { softBounceNotifier } from '../soft-bounce-check.js';
import { claimMails, LOOK_AGAIN_MS, releaseLease, type Claimed } from './claim.js';
import type { SendMailDeps } from './deps.js';
import { OutcomeRecorder } from './outcome-recorder.js';
import { groupJobs, loadBatchKeys, parseJobData, type BatchKeys } from './read-batch.js';
import { recordOutcome } from './record.js';
import { renderMails } from './render.js';
import { sendOverSmtp } from './smtp.js';
import { addFollowUp, enqueueFollowUps, type FollowUps } from './follow-ups.js';

export type { SendMailDeps } from './deps.js';
export { parseJobData } from './read-batch.js';

/**
 * The send worker. A pg-boss job names up to SEND_JOB_MAILS mails of one instance (a message's
 * mails at acceptance, a deferred batch's next try); each mail's state, tries and next try are in
 * its row. Jobs are fetched up to SEND_BATCH_SIZE mails at a time, up to SEND_BATCH_SIZE x
 * SEND_CONCURRENCY mails in hand (workers/machinery/job-consumer.ts, weighed by their mails). A
 * batch goes through these steps, each in its own file of this folder:
 *
 *  1. read-batch.ts  the jobs' mails grouped by instance; the batch's tenants and signing keys.
 *  Then for each instance's mails, side by side, in the tenant's transactions:
 *  2. render.ts      R: the mails read without locks and rendered (and their DKIM keys found)
 *                    outside any transaction, within the render bounds.
 *  3. claim.ts       A: one transaction locks the mails, looks again, applies the gates, claims
 *                    the batch's quota in one go, and moves the sendable ones to queued (2),
 *                    claimed by this worker and in its send lease; a mail another live run has at
 *                    SMTP, that changed while R rendered, or whose next try has not come, is left
 *                    for later.
 *  4. smtp.ts        each claimed mail to SMTP through the process's pooled transport, concurrently.
 *  5. record.ts      B: each reply moves its mail as soon as it arrives (sent, bounced or
 *                    deferred with its next try; outcome-recorder.ts writes them with group commit).
 *  6. claim.ts       the mail leaves the lease (releaseLease), recorded or not.
 *  7. follow-ups.ts  the mails left for later get jobs for then, one per instance and time, in one
 *                    insert; then the batch's jobs are completed together. A deferred mail's
 *                    backoff never holds back the other mails of its job, and lives in Postgres (its
 *                    row and its follow-up job): a restart loses no retry.
 *
 * At-least-once: a worker killed after the server's 250 and before B commits leaves the mail
 * queued (2) and its job active; after SEND_JOB_EXPIRE_SECONDS pg-boss retries the job and the
 * mail is sent again. B is written at once, with no waiting for the rest of the batch: replies
 * that arrive while a write is in flight go together in the next one (group commit), so the
 * window is about one Postgres round trip per reply, plus the in-process retries of B when
 * Postgres blips. At most the mails between their 250 and that write can be sent twice.
 */
async function handleBatch(boss: PgBoss, deps: SendMailDeps, recorder: OutcomeRecorder, jobs: PgBoss.Job<unknown>[]): Promise<void> {
  const batch = groupJobs(deps.logger, jobs);
  if (!batch.size) return;
  const keys = await loadBatchKeys(deps, [...batch.keys()]);
  const followUps: FollowUps = new Map();
  // One draw per batch: its mails deferred on the same try at about the same time are due in the same second, one job for them.
  const jitter = Math.random();
  const policy: RetryPolicy = { limit: deps.settings.retryLimit, delaySeconds: deps.settings.retryDelaySeconds };
  await Promise.all(
    [...batch].map(([instanceId, mailIds]) =>
      sendInstanceMails(deps, recorder, keys, instanceId, mailIds, policy, jitter, (mailId, at) => addFollowUp(followUps, instanceId, mailId, at)),
    ),
  );
  // A throw here fails the batch's jobs: pg-boss retries them by the queue's policy.
  await enqueueFollowUps(boss, followUps);
}

/** Steps 2 to 6 for one instance's mails of the batch; each mail not finished here goes to `later`. */
async function sendInstanceMails(
  deps: SendMailDeps,
  recorder: OutcomeRecorder,
  keys: BatchKeys,
  instanceId: number,
  mailIds: string[],
  policy: RetryPolicy,
  jitter: number,
  later: (mailId: string, at: Date) => void,
): Promise<void> {
  const tenant = keys.tenants.get(instanceId);
  if (!tenant) {
    deps.logger.error({ instanceId, mailIds }, 'send jobs for an unknown instance ignored');
    return;
  }
  let claimed: Claimed[];
  try {
    const renderings = await renderMails(deps, tenant, keys.signing, mailIds);
    const claim = await claimMails(deps, tenant, mailIds, renderings);
    claimed = claim.claimed;
    for (const l of claim.later) later(l.mailId, l.at);
  } catch (err) {
    deps.logger.warn({ err, instanceId }, 'could not prepare send jobs; their mails are tried again shortly');
    const soon = new Date(Date.now() + LOOK_AGAIN_MS);
    for (const mailId of mailIds) later(mailId, soon);
    return;
  }
  await Promise.all(
    claimed.map(async (mail) => {
      const at = await sendAndRecord(deps, recorder, tenant, mail, policy, jitter);
      if (at) later(mail.mailId, at);
    }),
  );
}

/** Steps 4 to 6 for one claimed mail: to SMTP, its reply recorded, out of the lease whatever happened. */
async function sendAndRecord(deps: SendMailDeps, recorder: OutcomeRecorder, tenant: Tenant, mail: Claimed, policy: RetryPolicy, jitter: number): Promise<Date | undefined> {
  try {
    const outcome = await sendOverSmtp(deps, mail);
    return await recordOutcome(deps, recorder, tenant, mail, outcome, policy, jitter);
  } finally {
    releaseLease(deps.lease, mail.mailId);
  }
}

/** The mails a job names: what it weighs in a batch and against the bound (a malformed job counts as one). */
function mailsOf(job: PgBoss.Job<unknown>): number {
  return parseJobData(job.data)?.mail_ids.length ?? 1;
}

/** Consecutive jobs cut into batches of at most `size` mails (a job is never split; a larger one is a batch alone). */
export function batchesOf(jobs: readonly PgBoss.Job<unknown>[], size: number): PgBoss.Job<unknown>[][] {
  const batches: PgBoss.Job<unknown>[][] = [];
  let current: PgBoss.Job<unknown>[] = [];
  let mails = 0;
  for (const job of jobs) {
    const n = mailsOf(job);
    if (current.length && mails + n > size) {
      batches.push(current);
      current = [];
      mails = 0;
    }
    current.push(job);
    mails += n;
  }
  if (current.length) batches.push(current);
  return batches;
}

/** The configured key ring, opened the first time a batch needs it (a worker whose domains have no key never reads or creates one). */
function lazyKeyRing(config: Config): () => KeyRing {
  let ring: KeyRing | undefined;
  return () => (ring ??= configuredKeyRing(config));
}

/** The defaults of SEND_BATCH_SIZE and SEND_CONCURRENCY (why these: config/schema.ts). */
export const SEND_DEFAULTS = { batchSize: CONFIG_SCHEMA.send.batchSize.default, loops: CONFIG_SCHEMA.send.concurrency.default } as const;

/**
 * Batches of up to SEND_BATCH_SIZE mails, up to SEND_BATCH_SIZE x SEND_CONCURRENCY mails at work
 * (WeightedSlots: a job larger than the batch size is a batch alone, and waits for room), sharing
 * the pool's SMTP connections and the process's Postgres pool. Each job is completed (in
 * one statement with the others done at the same time) when its batch ends; the answer stops the
 * consumer (the worker's shutdown).
 */
export function registerSendMail(boss: PgBoss, deps: SendMailDeps): () => Promise<void> {
  const { batchSize, concurrency } = deps.settings;
  const logger = deps.logger.child({ queue: SEND_MAIL_QUEUE });
  // After a commit that recorded soft bounces, the threshold job (not this hot path) counts them.
  const recorder = new OutcomeRecorder(deps.pool, softBounceNotifier(boss, logger));
  // The strict bound on mails at work (claimed, at SMTP, being recorded); fetching only aims at it.
  const slots = new WeightedSlots(batchSize * concurrency);
  const consumer = consumeJobs(
    boss,
    SEND_MAIL_QUEUE,
    {
      batchSize,
      maxActive: batchSize * concurrency,
      // An idle worker looks for new mails 10 times a second, about as often as pg-boss's own
      // loops did (twice a second each, 4 loops): a lone mail waits 50 ms on average.
      pollMs: 100,
      logger,
      weigh: mailsOf,
      firstWeight: SEND_JOB_MAILS,
    },
    async (jobs) =>
      batchesOf(jobs, batchSize).flatMap((batch) => {
        const mails = batch.reduce((n, job) => n + mailsOf(job), 0);
        const done = slots.take(mails).then(async (give) => {
          try {
            await handleBatch(boss, { ...deps, logger }, recorder, batch);
          } finally {
            give();
          }
        });
        return batch.map(() => done);
      }),
  );
  return () => consumer.stop(CONSUMER_STOP_GRACE_MS);
}

/**
 * The send job (workers/jobs/index.ts lists it). It registers its own consumer (registerSendMail
 * above), the hot path. Its queue's policy comes from SEND_RETRY_* and SEND_JOB_EXPIRE_SECONDS.
 */
export const sendMailJob = defineJob({
  name: SEND_MAIL_QUEUE,
  policy: ({ send }) => ({
    // A deferred (4xx) mail's tries are its own (its row and a follow-up job: record.ts); these
    // retries are the batch job's, when its run could not end (a killed worker's expired job,
    // Postgres unreachable when the follow-ups were written). SEND_RETRY_* make tests fast.
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
    // A deferred mail's tries and their schedule are the queue's policy, as release applied
    // SEND_RETRY_* to it (read at start: a release restarts the dynos).
    const queue = await boss.getQueue(SEND_MAIL_QUEUE);
    const retry = { retryLimit: queue?.retryLimit ?? config.send.retryLimit, retryDelaySeconds: queue?.retryDelay ?? config.send.retryDelaySeconds };
    return registerSendMail(boss, {
      pool,
      ...send,
      publicUrl: config.publicUrl,
      logger,
      settings: { ...config.send, ...retry },
      render: config.render,
      trackingSecret: config.trackingSecret,
      dkim: { ring: lazyKeyRing(config), returnPathSubdomain: config.domains.returnPathSubdomain },
    });
  },
});
