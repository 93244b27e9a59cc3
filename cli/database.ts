import { join } from 'node:path';
import pg from 'pg';
import type { Config } from '../config/config.js';
import { readServices } from '../config/services-file.js';
import { preferredPort } from '../config/ports.js';
import { migratePostgres } from '../sql/migrate.js';
import { createPool, type Pool } from '../sql/pool.js';
import type { JobQueue } from '../domain/job-queue.js';

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The job queue, loaded when a command first enqueues (instance set-limits releasing mails on
 * hold): workers/machinery/queue.js brings pg-boss and the list of every job, so with it most
 * of the domain (rendering, webhooks), about half a second of CPU that no other command needs.
 * Nothing to enqueue loads nothing, as the queue itself inserts nothing then.
 */
function queueOnUse(url: string): JobQueue {
  let queue: Promise<JobQueue> | undefined;
  return {
    async insert(client, jobs) {
      if (!jobs.length) return;
      queue ??= import('../workers/machinery/queue.js').then((m) => m.jobQueue(url));
      await (await queue).insert(client, jobs);
    },
  };
}

/**
 * The database a running `npm start` with the same DATA_DIR uses (or DATABASE_URL). When that
 * service is not running, the data dir's embedded Postgres is started for the one command and
 * stopped after it, so the CLI also works before the first `npm start`.
 */
export async function openDatabase(config: Config): Promise<{ pool: Pool; queue: JobQueue; close(): Promise<void> }> {
  let url = config.databaseUrl;
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    const recorded = readServices(config.dataDir).postgres;
    if (recorded && (await reachable(recorded.url))) {
      url = recorded.url;
    } else {
      // Loaded here: with DATABASE_URL or a running service (every test) no command needs it.
      const { startEmbeddedPostgres } = await import('../sql/embedded.js');
      const server = await startEmbeddedPostgres({ dir: join(config.dataDir, 'postgres'), port: await preferredPort(recorded?.port) });
      url = server.url;
      if (!server.adopted) stop = server.stop;
    }
  }
  const pool = createPool(url, { max: 2, application: 'cartero-cli' });
  await migratePostgres(pool);
  return {
    pool,
    queue: queueOnUse(url),
    async close() {
      await pool.end();
      await stop?.();
    },
  };
}
