import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { evaluateSoftBounces, instancesWithPendingSoftBounces, type SoftBounceSettings } from '../domain/restrictions/soft-bounces.js';
import { loadTenants } from '../domain/tenancy/instances.js';
import type { Pool } from '../sql/pool.js';
import { SOFT_BOUNCES_QUEUE, SOFT_BOUNCES_SWEEP_QUEUE, type SoftBouncesJob } from './queues.js';

export { SOFT_BOUNCES_QUEUE, SOFT_BOUNCES_SWEEP_QUEUE };

/**
 * The soft-bounce threshold job (domain/restrictions/soft-bounces.ts), out of the request path:
 * whoever commits a soft bounce (the send worker, the inbound DSN listener) enqueues it after
 * the commit; the minute sweep enqueues it for every instance that still has unevaluated soft
 * bounces, which covers an enqueue lost between the commit and the send (a crash, a blip).
 */
export async function enqueueSoftBounceCheck(boss: PgBoss, instanceId: number): Promise<void> {
  // singletonKey: while one job of the instance waits in the queue, more sends are no-ops.
  await boss.send(SOFT_BOUNCES_QUEUE, { instance_id: instanceId } satisfies SoftBouncesJob, { singletonKey: String(instanceId) });
}

/**
 * A fire-and-forget notifier for code that has just committed soft bounces (e.g. the inbound
 * listener's onSoftBounce): a failed enqueue is logged, never thrown, since the bounce itself is
 * recorded and the sweep will pick it up.
 */
export function softBounceNotifier(boss: PgBoss, logger: Logger): (instanceId: number) => void {
  return (instanceId) => {
    enqueueSoftBounceCheck(boss, instanceId).catch((err) =>
      logger.warn({ err, instanceId }, 'could not enqueue the soft-bounce check; the minute sweep will'),
    );
  };
}

function parseJobData(data: unknown): SoftBouncesJob | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const id = (data as Record<string, unknown>).instance_id;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? { instance_id: id } : undefined;
}

/** settings: SOFT_BOUNCE_THRESHOLD and SOFT_BOUNCE_WINDOW_DAYS, from the process's configuration. */
export async function registerSoftBounces(boss: PgBoss, deps: { pool: Pool; logger: Logger; settings: SoftBounceSettings }): Promise<void> {
  const logger = deps.logger.child({ queue: SOFT_BOUNCES_QUEUE });
  const { settings } = deps;
  await boss.work<unknown>(SOFT_BOUNCES_QUEUE, async (jobs) => {
    for (const job of jobs) {
      const data = parseJobData(job.data);
      if (!data) {
        logger.error({ jobId: job.id, data: job.data }, 'malformed soft-bounce job ignored');
        continue;
      }
      const tenant = (await loadTenants(deps.pool, [data.instance_id])).get(data.instance_id);
      if (!tenant) {
        logger.error({ instanceId: data.instance_id }, 'soft-bounce job for an unknown instance ignored');
        continue;
      }
      const result = await evaluateSoftBounces(tenant, deps.pool, settings);
      if (result.restricted.length) {
        logger.info({ instance: tenant.slug, restricted: result.restricted, ...settings }, 'addresses restricted after repeated soft bounces');
      }
      logger.debug({ instance: tenant.slug, evaluated: result.evaluated }, 'soft bounces evaluated');
    }
  });
  await boss.work(SOFT_BOUNCES_SWEEP_QUEUE, async () => {
    for (const tenant of await instancesWithPendingSoftBounces(deps.pool)) await enqueueSoftBounceCheck(boss, tenant.instanceId);
  });
  await boss.schedule(SOFT_BOUNCES_SWEEP_QUEUE, '* * * * *');
}
