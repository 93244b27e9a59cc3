import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Config } from '../runtime/config.js';
import type { SmtpTransport } from '../smtp/transport.js';
import type { Pool } from '../sql/pool.js';
import { registerHeartbeat } from './heartbeat.js';
import { registerHousekeeping } from './housekeeping.js';
import { jobQueue } from '../runtime/queue.js';
import { registerSendMail } from './send-mail.js';
import type { SendLease } from './send-lease.js';
import { registerSoftBounces } from './soft-bounces.js';

/** What job handlers get from the worker process (runtime/worker.ts). */
export interface JobDeps {
  pool: Pool;
  config: Config;
  logger: Logger;
  workerId: string;
  /** The process's pooled SMTP client and its send lease; undefined when SMTP_URL is not set. */
  send: { smtp: SmtpTransport; lease: SendLease } | undefined;
}

/** Every job handler of the worker dyno. Later issues register theirs here. */
export async function registerJobs(boss: PgBoss, deps: JobDeps): Promise<void> {
  await registerHeartbeat(boss, deps.pool, deps.workerId);
  await registerHousekeeping(boss, { pool: deps.pool, queue: jobQueue(deps.config.databaseUrl!), logger: deps.logger });
  await registerSoftBounces(boss, { pool: deps.pool, logger: deps.logger, settings: deps.config.softBounces });
  if (deps.send) {
    await registerSendMail(boss, {
      pool: deps.pool,
      ...deps.send,
      publicUrl: deps.config.publicUrl,
      logger: deps.logger,
      settings: deps.config.send,
      render: deps.config.render,
      trackingSecret: deps.config.trackingSecret,
    });
  } else {
    // Accepted mails wait in the queue (nothing is lost) until a worker with SMTP_URL runs.
    deps.logger.error('SMTP_URL is not set: this worker does not send mail (mail.send jobs wait for one that does)');
  }
}
