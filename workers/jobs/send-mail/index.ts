import type PgBoss from 'pg-boss';
import { configuredKeyRing, type KeyRing } from '../../../domain/domains/key-encryption.js';
import { SEND_MAIL_QUEUE } from '../../../domain/job-queue.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import { CONFIG_SCHEMA } from '../../../config/schema.js';
import type { Config } from '../../../config/config.js';
import { defineJob } from '../../machinery/job.js';
import { softBounceNotifier } from '../soft-bounce-check.js';
import { claimMails, releaseLease, type Claimed } from './claim.js';
import type { InstanceMails, SendJob, SendMailDeps } from './deps.js';
import { OutcomeRecorder } from './outcome-recorder.js';
import { groupJobs, loadBatchKeys, parseJobData, type BatchKeys } from './read-batch.js';
import { recordOutcome } from './record.js';
import { renderMails } from './render.js';
import { sendOverSmtp } from './smtp.js';
import { errorText, failUnfinishedJobs, settleMail, type JobVerdict, type Verdicts } from './verdicts.js';

export type { SendMailDeps } from './deps.js';
export { parseJobData } from './read-batch.js';

/**
 * The send worker: one pg-boss job per mail (data SendMailJob), fetched in batches. A batch goes
 * through these steps, each in its own file of this folder:
 *
 *  1. read-batch.ts  the jobs grouped by instance and mail; the batch's tenants and signing keys.
 *  Then for each instance's mails, side by side, in the tenant's transactions:
 *  2. render.ts      R: the mails read without locks and rendered (and their DKIM keys found)
 *                    outside any transaction, within the render bounds.
 *  3. claim.ts       A: one transaction locks the mails, looks again, applies the gates, and
 *                    moves the sendable ones to queued (2), claimed by this worker and in its
 *                    send lease; a mail another live run has at SMTP, or that changed while R
 *                    rendered, is left for its job's retry.
 *  4. smtp.ts        each claimed mail to SMTP through the process's pooled transport, concurrently.
 *  5. record.ts      B: each reply moves its mail as soon as it arrives (sent, bounced or
 *                    deferred; outcome-recorder.ts writes them with group commit).
 *  6. claim.ts       the mail leaves the lease (releaseLease), recorded or not.
 *  7. verdicts.ts    each job settled on its own: deferred or not sendable now, it fails and
 *                    pg-boss retries it with the queue's backoff; the others complete.
 *
 * At-least-once: a worker killed after the server's 250 and before B commits leaves the mail
 * queued (2) and its job active; after SEND_JOB_EXPIRE_SECONDS pg-boss retries the job and the
 * mail is sent again. B is written at once, with no waiting for the rest of the batch: replies
 * that arrive while a write is in flight go together in the next one (group commit), so the
 * window is about one Postgres round trip per reply, plus the in-process retries of B when
 * Postgres blips. At most the mails between their 250 and that write can be sent twice.
 */
async function handleBatch(boss: PgBoss, deps: SendMailDeps, recorder: OutcomeRecorder, jobs: SendJob[]): Promise<void> {
  const batch = groupJobs(deps.logger, jobs);
  if (!batch.size) return;
  const keys = await loadBatchKeys(deps, [...batch.keys()]);
  const verdicts: Verdicts = new Map();
  await Promise.all([...batch].map(([instanceId, mails]) => sendInstanceMails(deps, recorder, keys, verdicts, instanceId, mails)));
  await failUnfinishedJobs(boss, jobs, verdicts);
}

/** Steps 2 to 6 for one instance's mails of the batch; their jobs' verdicts go in `verdicts`. */
async function sendInstanceMails(deps: SendMailDeps, recorder: OutcomeRecorder, keys: BatchKeys, verdicts: Verdicts, instanceId: number, mails: InstanceMails): Promise<void> {
  const settle = (mailId: string, verdict: JobVerdict) => settleMail(verdicts, mails, mailId, verdict);
  const tenant = keys.tenants.get(instanceId);
  if (!tenant) {
    deps.logger.error({ instanceId, mailIds: [...mails.keys()] }, 'send jobs for an unknown instance ignored');
    return;
  }
  let claimed: Claimed[];
  try {
    const renderings = await renderMails(deps, tenant, keys.signing, [...mails.keys()]);
    const claim = await claimMails(deps, tenant, mails, renderings);
    claimed = claim.claimed;
    for (const mailId of claim.held) settle(mailId, { done: false, error: 'held: another run still has this mail at SMTP' });
    for (const mailId of claim.changed) settle(mailId, { done: false, error: 'changed while the batch was rendered; tried again' });
  } catch (err) {
    deps.logger.warn({ err, instanceId }, 'could not prepare send jobs; pg-boss retries them');
    for (const mailId of mails.keys()) settle(mailId, { done: false, error: errorText(err) });
    return;
  }
  await Promise.all(claimed.map(async (mail) => settle(mail.mailId, await sendAndRecord(deps, recorder, tenant, mail))));
}

/** Steps 4 to 6 for one claimed mail: to SMTP, its reply recorded, out of the lease whatever happened. */
async function sendAndRecord(deps: SendMailDeps, recorder: OutcomeRecorder, tenant: Tenant, mail: Claimed): Promise<JobVerdict> {
  try {
    const outcome = await sendOverSmtp(deps, mail);
    return await recordOutcome(deps, recorder, tenant, mail, outcome);
  } finally {
    releaseLease(deps.lease, mail.mailId);
  }
}

/** The configured key ring, opened the first time a batch needs it (a worker whose domains have no key never reads or creates one). */
function lazyKeyRing(config: Config): () => KeyRing {
  let ring: KeyRing | undefined;
  return () => (ring ??= configuredKeyRing(config));
}

/** The defaults of SEND_BATCH_SIZE and SEND_CONCURRENCY (why these: config/schema.ts). */
export const SEND_DEFAULTS = { batchSize: CONFIG_SCHEMA.send.batchSize.default, loops: CONFIG_SCHEMA.send.concurrency.default } as const;

/**
 * SEND_BATCH_SIZE jobs per fetch, SEND_CONCURRENCY fetch loops per process: up to their product
 * mails in flight, sharing the pool's SMTP connections and the process's Postgres pool.
 */
export async function registerSendMail(boss: PgBoss, deps: SendMailDeps): Promise<void> {
  const { batchSize, concurrency: loops } = deps.settings;
  const logger = deps.logger.child({ queue: SEND_MAIL_QUEUE });
  // After a commit that recorded soft bounces, the threshold job (not this hot path) counts them.
  const recorder = new OutcomeRecorder(deps.pool, softBounceNotifier(boss, logger));
  for (let i = 0; i < loops; i++) {
    let workerId: string | undefined;
    workerId = await boss.work<unknown>(
      SEND_MAIL_QUEUE,
      { includeMetadata: true, batchSize, pollingIntervalSeconds: 0.5 },
      async (jobs) => {
        await handleBatch(boss, { ...deps, logger }, recorder, jobs);
        // A full batch means more are waiting: fetch again now instead of after the poll interval.
        if (jobs.length === batchSize && workerId) boss.notifyWorker(workerId);
      },
    );
  }
}

/**
 * The send job (workers/jobs/index.ts lists it). It registers its own consumers: batches and several
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
