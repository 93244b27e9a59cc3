import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createSmtpTransport } from '../smtp/transport.js';
import { createPool } from '../sql/pool.js';
import { registerJobs } from '../workers/index.js';
import type { Config } from './config.js';
import { createBoss } from './queue.js';
import { runDyno } from './main.js';
import { required } from './shutdown.js';

export interface WorkerProcess {
  workerId: string;
  stop(): Promise<void>;
}

/** Start the worker dyno: pg-boss consumers for every job (also used in-process by tests). */
export async function startWorker(config: Config, logger: Logger): Promise<WorkerProcess> {
  const databaseUrl = required('DATABASE_URL', config.databaseUrl);
  const pool = createPool(databaseUrl, { max: 10, application: 'cartero-worker' });
  const boss = createBoss(databaseUrl);
  boss.on('error', (err) => logger.error({ err }, 'queue error'));
  await boss.start();
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // One pooled SMTP client per process, shared by every send job.
  const smtp = config.smtpUrl ? createSmtpTransport(config.smtpUrl) : undefined;
  await registerJobs(boss, { pool, config, logger, workerId, smtp });
  return {
    workerId,
    async stop() {
      // Graceful: running jobs finish (or are retried by another worker after expiry).
      await boss.stop({ graceful: true, wait: true, timeout: 15_000 });
      smtp?.close();
      await pool.end();
    },
  };
}

runDyno(import.meta.url, 'worker', async (config, logger) => {
  const worker = await startWorker(config, logger);
  return { stop: () => worker.stop(), describe: { workerId: worker.workerId } };
});
