import { feedDataset } from '../../domain/forms/feed.js';
import { FORM_DATASET_FEED_QUEUE, type FormDatasetFeedJob } from '../../domain/job-queue.js';
import { loadTenant } from '../../domain/tenancy/instances.js';
import { defineJob, type JobContext } from '../machinery/job.js';
import { isRowId } from '../../domain/row-id.js';

function parse(payload: unknown): FormDatasetFeedJob | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const p = payload as Record<string, unknown>;
  if (!isRowId(p.instance_id) || !isRowId(p.submission_id)) return undefined;
  return { instance_id: p.instance_id, submission_id: p.submission_id };
}

/**
 * A contact the dataset refuses (its declaration changed with --connected-forms keep, say) cannot
 * change on a retry: logged with its code. Postgres down is thrown, so pg-boss retries.
 */
async function handle(data: FormDatasetFeedJob, { pool, logger }: JobContext): Promise<void> {
  const tenant = await loadTenant(pool, data.instance_id);
  const log = { instanceId: data.instance_id, submissionId: data.submission_id };
  if (!tenant) {
    logger.error(log, 'form dataset feed for an unknown instance ignored');
    return;
  }
  const result = await feedDataset(tenant, pool, data.submission_id);
  if (result.outcome === 'refused') logger.error({ ...log, code: result.code, detail: result.detail }, 'form submission refused by its dataset');
  else logger.info({ ...log, ...result }, 'form dataset feed done');
}

/** A confirmed form submission feeds its dataset (domain/forms/feed.ts); consumed in batches (`batch`, workers/machinery/batched-work.ts). */
export const formDatasetFeedJob = defineJob({
  name: FORM_DATASET_FEED_QUEUE,
  policy: { retryLimit: 8, retryDelay: 10, retryBackoff: true, expireInSeconds: 120 },
  parse,
  handle,
  batch: 10,
});
