import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { SOFT_BOUNCES_QUEUE, type SoftBouncesJob } from '../../domain/job-queue.js';

/**
 * Enqueue the soft-bounce threshold job (workers/jobs/soft-bounces.ts) for an instance, after a commit
 * that recorded soft bounces: the send worker, the inbound DSN listener and the minute sweep.
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
