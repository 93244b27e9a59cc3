import type PgBoss from 'pg-boss';
import type { ClickHouseClient } from '../../analytics/client.js';
import type { Logger } from 'pino';
import type { JobQueue } from '../../domain/job-queue.js';
import type { Config } from '../../config/config.js';
import type { SmtpTransport } from '../../smtp/transport.js';
import type { Pool } from '../../sql/pool.js';
import type { MailRenderer } from '../jobs/send-mail/render-threads.js';
import type { SendLease } from './send-lease.js';

/*
 * What every way of running a job shares (workers/machinery/job.ts declares jobs,
 * workers/machinery/batched-work.ts consumes the batched ones): the handler's context and a
 * job's stop. Here, not in job.ts, so that neither of the two imports the other back.
 */

/** What a job's handler gets from the worker process (runtime/worker.ts). */
export interface JobContext {
  boss: PgBoss;
  pool: Pool;
  /** The worker's ClickHouse client (bounded request timeout), for jobs that read figures. */
  clickhouse: ClickHouseClient;
  config: Config;
  logger: Logger;
  workerId: string;
  /** Enqueues inside a caller's transaction (domain code that enqueues takes it). */
  queue: JobQueue;
  /** The process's pooled SMTP client, its send lease and its render threads; undefined when SMTP_URL is not set. */
  send: { smtp: SmtpTransport; lease: SendLease; renderer: MailRenderer } | undefined;
}

/** Stops what a job started (its consumers, loops, pools). */
export type Stop = () => Promise<void>;
