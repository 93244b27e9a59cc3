import type { Logger } from 'pino';
import type { SendMailJob } from '../../../domain/job-queue.js';
import type { ReportKey } from '../../../domain/bounces/report-tag.js';
import { reportKeys } from '../../../domain/bounces/report-keys.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import { loadTenants } from '../../../domain/tenancy/instances.js';
import { trackingSecret } from '../../../domain/tracking/secret.js';
import type { InstanceMails, SendJob, SendMailDeps } from './deps.js';

/*
 * Step 1 of a send batch (workers/jobs/send-mail/index.ts): which mails the jobs name, per
 * instance, and what the whole batch shares (its tenants, the keys every rendering signs with),
 * read once per batch rather than once per mail.
 */

/** The payload as the handler may trust it (pg-boss payloads are unknown until checked), or undefined. */
export function parseJobData(data: unknown): SendMailJob | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  if (typeof d.instance_id !== 'number' || !Number.isSafeInteger(d.instance_id) || d.instance_id <= 0) return undefined;
  if (typeof d.mail_id !== 'string' || !/^[0-9A-Za-z]{1,64}$/.test(d.mail_id)) return undefined;
  return { instance_id: d.instance_id, mail_id: d.mail_id };
}

/**
 * instance -> mail -> its jobs: each instance's mails go through their own transactions, and a
 * duplicate job for a mail shares the first one's fate instead of sending the mail again.
 */
export function groupJobs(logger: Logger, jobs: readonly SendJob[]): Map<number, InstanceMails> {
  const groups = new Map<number, InstanceMails>();
  for (const job of jobs) {
    const data = parseJobData(job.data);
    if (!data) {
      // Retrying cannot fix a malformed payload: completed, and said loudly.
      logger.error({ jobId: job.id, data: job.data }, 'malformed send job ignored');
      continue;
    }
    const mails = groups.get(data.instance_id) ?? new Map<string, SendJob[]>();
    groups.set(data.instance_id, mails);
    mails.set(data.mail_id, [...(mails.get(data.mail_id) ?? []), job]);
  }
  return groups;
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
