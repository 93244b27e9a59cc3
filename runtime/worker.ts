import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createClickHouseClient } from '../analytics/client.js';
import { createSmtpTransport } from '../smtp/transport.js';
import { startInboundSmtp, type InboundSmtp } from '../smtp/inbound.js';
import { startSubmissionSmtp, type SubmissionSmtp } from '../smtp/submission/listener.js';
import { readFileSync } from 'node:fs';
import { checkSchemaVersion } from '../sql/migrate.js';
import { createPool } from '../sql/pool.js';
import { registerJobs, renderThreads, softBounceNotifier, startDmarcShipper, startEventPump, startSendLease } from '../workers/index.js';
import type { Config } from '../config/config.js';
import { createBoss, jobQueue } from '../workers/machinery/queue.js';
import { runDyno } from './main.js';
import { required } from './shutdown.js';

export interface WorkerProcess {
  workerId: string;
  /** Where the inbound SMTP listener listens, when INBOUND_SMTP_PORT is set. */
  inboundSmtpPort: number | undefined;
  /** Where the submission listener listens (STARTTLS, implicit TLS), when SUBMISSION_PORT / SUBMISSIONS_PORT are set. */
  submissionPorts: { port: number | undefined; tlsPort: number | undefined } | undefined;
  stop(): Promise<void>;
}

/** Start the worker dyno: pg-boss consumers for every job (also used in-process by tests). */
export async function startWorker(config: Config, logger: Logger): Promise<WorkerProcess> {
  const databaseUrl = required('DATABASE_URL', config.databaseUrl);
  const pool = createPool(databaseUrl, { max: 10, application: 'cartero-worker' });
  // A schema migrated by newer code stops the dyno here, before a job or pg-boss touches it (sql/migrate.ts).
  await checkSchemaVersion(pool).catch(async (err) => {
    await pool.end();
    throw err;
  });
  const boss = createBoss(databaseUrl, { maintenanceIntervalSeconds: config.queue.maintenanceSeconds });
  boss.on('error', (err) => logger.error({ err }, 'queue error'));
  await boss.start();
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // One pooled SMTP client per process, shared by every send job.
  const smtp = config.smtpUrl ? createSmtpTransport(config.smtpUrl, { timeouts: config.smtpTimeouts }) : undefined;
  const lease = smtp ? await startSendLease(pool, workerId, logger, config.send.jobExpireSeconds) : undefined;
  const renderer = smtp ? renderThreads(config.render.threads) : undefined;
  // The worker's own ClickHouse client: a bounded request timeout, so an unanswering server only
  // delays shipping (the event pump, the DMARC shipper) and a job's reads (deliverability alerts).
  const clickhouse = createClickHouseClient(required('CLICKHOUSE_URL', config.clickhouseUrl), undefined, { requestTimeoutMs: 10_000 });
  const stopJobs = await registerJobs(boss, { pool, clickhouse, config, logger, workerId, send: smtp && lease && renderer ? { smtp, lease, renderer } : undefined });
  // The event pump counts tracking events and ships them to ClickHouse (workers/jobs/event-pump.ts).
  const pump = startEventPump({ pool, clickhouse, logger });
  // DMARC aggregate reports the listener stored wait in Postgres until this ships them (workers/jobs/dmarc-ship.ts).
  const dmarcShipper = startDmarcShipper({ pool, clickhouse, logger });
  let inbound: InboundSmtp | undefined;
  if (config.inboundSmtpPort !== undefined) {
    inbound = await startInboundSmtp({
      pool,
      host: config.inboundSmtpHost,
      port: config.inboundSmtpPort,
      limits: config.inboundLimits,
      logger,
      onSoftBounce: softBounceNotifier(boss, logger),
      dmarc: { returnPathSubdomain: config.domains.returnPathSubdomain, dnsServers: config.domains.dnsServers, onStored: () => dmarcShipper.wake() },
    });
    logger.info({ port: inbound.port }, 'inbound SMTP listening for bounces and complaints');
  }
  // The submission listener (smtp/submission/): programs that speak SMTP send through it.
  let submission: SubmissionSmtp | undefined;
  const sub = config.submission;
  if (sub.port !== undefined || sub.tlsPort !== undefined) {
    // config/needs.ts refused to start without both files.
    submission = await startSubmissionSmtp({
      pool,
      queue: jobQueue(databaseUrl),
      logger,
      host: sub.host,
      port: sub.port,
      tlsPort: sub.tlsPort,
      tls: { cert: readFileSync(sub.tlsCertFile!), key: readFileSync(sub.tlsKeyFile!) },
      limits: sub,
      render: config.render,
    });
    logger.info({ port: submission.port, tlsPort: submission.tlsPort }, 'submission SMTP listening');
  }
  return {
    workerId,
    inboundSmtpPort: inbound?.port,
    submissionPorts: submission ? { port: submission.port, tlsPort: submission.tlsPort } : undefined,
    async stop() {
      await inbound?.close();
      await submission?.close();
      await pump.stop();
      await dmarcShipper.stop();
      // Graceful: running jobs finish (or are retried by another worker after expiry); the
      // consumers a job runs itself first, while the queue still takes their outcomes.
      await stopJobs();
      await boss.stop({ graceful: true, wait: true, timeout: 15_000 });
      // After the jobs, which may read figures (the deliverability alerts).
      await clickhouse.close();
      // After the jobs: a mail still listed past this point was not settled here.
      await lease?.stop();
      await renderer?.close();
      smtp?.close();
      await pool.end();
    },
  };
}

runDyno(import.meta.url, 'worker', async (config, logger) => {
  const worker = await startWorker(config, logger);
  return { stop: () => worker.stop(), describe: { workerId: worker.workerId, inboundSmtpPort: worker.inboundSmtpPort, submissionPorts: worker.submissionPorts } };
});
