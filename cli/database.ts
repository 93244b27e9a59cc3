import { join } from 'node:path';
import pg from 'pg';
import type { Config } from '../config/config.js';
import { readServices } from '../config/services-file.js';
import { preferredPort } from '../config/ports.js';
import { startEmbeddedPostgres } from '../sql/embedded.js';
import { migratePostgres } from '../sql/migrate.js';
import { createPool, type Pool } from '../sql/pool.js';
import type { JobQueue } from '../domain/jobs.js';
import { jobQueue } from '../workers/machinery/queue.js';

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
      const server = await startEmbeddedPostgres({ dir: join(config.dataDir, 'postgres'), port: await preferredPort(recorded?.port) });
      url = server.url;
      if (!server.adopted) stop = server.stop;
    }
  }
  const pool = createPool(url, { max: 2, application: 'cartero-cli' });
  await migratePostgres(pool);
  return {
    pool,
    queue: jobQueue(url),
    async close() {
      await pool.end();
      await stop?.();
    },
  };
}
