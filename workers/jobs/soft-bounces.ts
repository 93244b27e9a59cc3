import { evaluateSoftBounces } from '../../domain/restrictions/soft-bounces.js';
import { loadTenant } from '../../domain/tenancy/instances.js';
import { SOFT_BOUNCES_QUEUE, type SoftBouncesJob } from '../../domain/job-queue.js';
import { defineJob } from '../machinery/job.js';
import { softBouncesSweepJob } from './soft-bounces-sweep.js';
import { isRowId } from '../../domain/row-id.js';

export { SOFT_BOUNCES_QUEUE };
export const SOFT_BOUNCES_SWEEP_QUEUE = softBouncesSweepJob.name;

/**
 * The soft-bounce threshold job (domain/restrictions/soft-bounces.ts), out of the request path:
 * whoever commits a soft bounce (the send worker, the inbound DSN listener) enqueues it after the
 * commit (workers/jobs/soft-bounce-check.ts); the minute sweep (workers/jobs/soft-bounces-sweep.ts) covers
 * a lost enqueue. Policy short: at most one job per instance waits in the queue, so a burst of
 * bounces makes one job; one may wait while another runs, so bounces recorded during a run are
 * not missed (the evaluation itself is safe to run twice at once). Settings: SOFT_BOUNCE_THRESHOLD
 * and SOFT_BOUNCE_WINDOW_DAYS.
 */
export const softBouncesJob = defineJob({
  name: SOFT_BOUNCES_QUEUE,
  policy: { policy: 'short', retryLimit: 5, retryDelay: 30, retryBackoff: true, expireInSeconds: 600 },
  parse(payload: unknown): SoftBouncesJob | undefined {
    if (payload === null || typeof payload !== 'object') return undefined;
    const id = (payload as Record<string, unknown>).instance_id;
    return isRowId(id) ? { instance_id: id } : undefined;
  },
  async handle(data, { pool, logger, config }) {
    const settings = config.softBounces;
    const tenant = await loadTenant(pool, data.instance_id);
    if (!tenant) {
      logger.error({ instanceId: data.instance_id }, 'soft-bounce job for an unknown instance ignored');
      return;
    }
    const result = await evaluateSoftBounces(tenant, pool, settings);
    if (result.restricted.length) {
      logger.info({ instance: tenant.slug, restricted: result.restricted, ...settings }, 'addresses restricted after repeated soft bounces');
    }
    logger.debug({ instance: tenant.slug, evaluated: result.evaluated }, 'soft bounces evaluated');
  },
});
