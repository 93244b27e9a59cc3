import type { Logger } from 'pino';
import { migrateClickHouse } from '../analytics/migrate.js';
import { syncSandboxDomain } from '../domain/domains/sandbox.js';
import { migratePostgres, withMigrationLock } from '../sql/migrate.js';
import { createPool, type Pool } from '../sql/pool.js';
import type { SendSettings } from '../config/config.js';
import { migrateQueue } from '../workers/machinery/queue-migration.js';

/**
 * Everything `release` does, idempotently: Postgres schema, pg-boss schema, ClickHouse schema.
 * ClickHouse has no transactional DDL or locks, so its migrator runs under a Postgres advisory
 * lock: two release dynos never apply the same ClickHouse migration at once. The send queue's
 * retry and expiry policy (SEND_RETRY_*, SEND_JOB_EXPIRE_SECONDS) and SANDBOX_DOMAIN are applied here.
 */
export async function runMigrations(
  urls: {
    databaseUrl: string;
    clickhouseUrl: string;
    send: SendSettings;
    /** CLICKHOUSE_CLUSTER; `nodes`: the embedded cluster's node URLs (analytics/migrate.ts). */
    clickhouseCluster?: { name: string; nodes?: readonly string[] };
    /** SANDBOX_DOMAIN: written to the database, every instance's sandbox renamed to it. */
    sandboxDomain?: string;
  },
  logger?: Logger,
): Promise<void> {
  const pool = createPool(urls.databaseUrl, { max: 2, application: 'cartero-release' });
  try {
    await migratePostgresSide(pool, urls, logger);
    const chResult = await migrateClickHouse(urls.clickhouseUrl, {
      lock: (fn) => withMigrationLock(pool, fn),
      log: (m) => logger?.info(m),
      ...(urls.clickhouseCluster ? { cluster: urls.clickhouseCluster } : {}),
    });
    logger?.info({ applied: chResult.applied }, 'clickhouse migrations');
  } finally {
    await pool.end();
  }
}

/**
 * The Postgres half of a release: the schema, SANDBOX_DOMAIN, and pg-boss's schema with the send
 * queue's policy. Apart because the test suite's template database (test/setup/template-database.ts)
 * is made by exactly this, once per run, before any file has a ClickHouse database.
 */
export async function migratePostgresSide(
  pool: Pool,
  urls: { databaseUrl: string; send: SendSettings; sandboxDomain?: string },
  logger?: Logger,
): Promise<void> {
  const pgResult = await migratePostgres(pool);
  logger?.info({ applied: pgResult.applied }, 'postgres migrations');
  if (urls.sandboxDomain) await syncSandboxDomain(pool, urls.sandboxDomain);
  await migrateQueue(urls.databaseUrl, urls.send);
}
