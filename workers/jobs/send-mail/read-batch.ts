import type { Logger } from 'pino';
import type PgBoss from 'pg-boss';
import { SEND_JOB_MAILS, type SendMailJob } from '../../../domain/job-queue.js';
import type { ReportKey } from '../../../domain/bounces/report-tag.js';
import { reportKeys } from '../../../domain/bounces/report-keys.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import { loadTenants } from '../../../domain/tenancy/instances.js';
import { trackingSecret } from '../../../domain/tracking/secret.js';
import type { SendMailDeps } from './deps.js';

/*
 * Step 1 of a send batch (workers/jobs/send-mail/index.ts): which mails the jobs name, per
 * instance, and what the whole batch shares (its tenants, the keys every rendering signs with),
 * read once per batch rather than once per mail.
 */

const MAIL_ID = /^[0-9A-Za-z]{1,64}$/;

/**
 * The payload as the handler may trust it (pg-boss payloads are unknown until checked), or
 * undefined: a batch ({instance_id, mail_ids}, up to SEND_JOB_MAILS) or, as the code before issue
 * 42 enqueued, one mail ({instance_id, mail_id}).
 */
export function parseJobData(data: unknown): SendMailJob | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  if (typeof d.instance_id !== 'number' || !Number.isSafeInteger(d.instance_id) || d.instance_id <= 0) return undefined;
  const ids = 'mail_ids' in d ? d.mail_ids : [d.mail_id];
  if (!Array.isArray(ids) || !ids.length || ids.length > SEND_JOB_MAILS) return undefined;
  if (!ids.every((id): id is string => typeof id === 'string' && MAIL_ID.test(id))) return undefined;
  return { instance_id: d.instance_id, mail_ids: ids };
}

/**
 * instance -> its mails in the batch, each once: each instance's mails go through their own
 * transactions, and a mail named by two jobs (a duplicate, a follow-up written twice) is looked at
 * once.
 */
export function groupJobs(logger: Logger, jobs: readonly PgBoss.Job<unknown>[]): Map<number, string[]> {
  const groups = new Map<number, Set<string>>();
  for (const job of jobs) {
    const data = parseJobData(job.data);
    if (!data) {
      // Retrying cannot fix a malformed payload: completed, and said loudly.
      logger.error({ jobId: job.id, data: job.data }, 'malformed send job ignored');
      continue;
    }
    const mails = groups.get(data.instance_id) ?? new Set<string>();
    groups.set(data.instance_id, mails);
    for (const mailId of data.mail_ids) mails.add(mailId);
  }
  return new Map([...groups].map(([instanceId, mails]) => [instanceId, [...mails]]));
}

/** The keys a rendering signs with: tracking links, and the tag of the return path and identity. */
export interface SigningKeys {
  secret: string;
  reportKey: ReportKey;
}

/** What every mail of the batch needs: its instance's tenant, and the signing keys. */
export interface BatchKeys {
  tenants: Map<number, Tenant>;
  signing: SigningKeys;
}

export async function loadBatchKeys(deps: SendMailDeps, instanceIds: number[]): Promise<BatchKeys> {
  const tenants = await loadTenants(deps.pool, instanceIds);
  const secret = await trackingSecret(deps.pool, deps.trackingSecret);
  const reportKey = (await reportKeys(deps.pool)).current;
  return { tenants, signing: { secret, reportKey } };
}
