import type PgBoss from 'pg-boss';
import type { SendSettings } from '../../config/config.js';
import { queuePolicies } from '../jobs/index.js';
import { createBoss } from './queue.js';

// Its own module, apart from createBoss and jobQueue: the queue policies come from the list of
// every job (workers/jobs/index.ts), which the processes that only enqueue (web, CLI) must not load.
/**
 * Install or upgrade pg-boss's schema and create or update the queue of every job of the list
 * (workers/jobs/index.ts) with its policy (release step); `send` feeds the send queue's policy.
 */
export async function migrateQueue(databaseUrl: string, send: SendSettings): Promise<void> {
  const boss = createBoss(databaseUrl, { migrate: true, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  try {
    for (const { name, ...options } of queuePolicies({ send })) {
      if (await boss.getQueue(name)) await boss.updateQueue(name, options as PgBoss.Queue);
      else await boss.createQueue(name, { name, ...options } as PgBoss.Queue);
    }
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

