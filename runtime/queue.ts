import PgBoss from 'pg-boss';

/**
 * pg-boss on the service's Postgres. Only the release step migrates its schema; web and worker
 * dynos start with migrate: false so N copies starting together never race on DDL.
 */
export function createBoss(databaseUrl: string, opts: { migrate?: boolean; supervise?: boolean; schedule?: boolean } = {}): PgBoss {
  const boss = new PgBoss({
    connectionString: databaseUrl,
    schema: 'pgboss',
    application_name: 'cartero-queue',
    migrate: opts.migrate ?? false,
    supervise: opts.supervise ?? true,
    schedule: opts.schedule ?? true,
    max: 5,
  });
  return boss;
}

/** Install or upgrade pg-boss's schema (release step). */
export async function migrateQueue(databaseUrl: string): Promise<void> {
  const boss = createBoss(databaseUrl, { migrate: true, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  await boss.stop({ graceful: false, wait: true });
}
