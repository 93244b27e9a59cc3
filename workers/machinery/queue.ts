import PgBoss from 'pg-boss';
import type { JobQueue } from '../../domain/job-queue.js';

/**
 * pg-boss on the service's Postgres. Only the release step migrates its schema; web and worker
 * dynos start with migrate: false so N copies starting together never race on DDL.
 */
export function createBoss(
  databaseUrl: string,
  opts: { migrate?: boolean; supervise?: boolean; schedule?: boolean; maintenanceIntervalSeconds?: number } = {},
): PgBoss {
  const boss = new PgBoss({
    connectionString: databaseUrl,
    schema: 'pgboss',
    application_name: 'cartero-queue',
    migrate: opts.migrate ?? false,
    supervise: opts.supervise ?? true,
    schedule: opts.schedule ?? true,
    max: 5,
    // How often expired jobs (a worker killed mid-job) are found and retried: the worker passes
    // QUEUE_MAINTENANCE_SECONDS (pg-boss's 120 s default would leave such mails waiting minutes);
    // processes that do not supervise never run maintenance.
    ...(opts.maintenanceIntervalSeconds === undefined ? {} : { maintenanceIntervalSeconds: opts.maintenanceIntervalSeconds }),
  });
  return boss;
}

/**
 * A JobQueue over pg-boss for processes that only enqueue (web, CLI): pg-boss's insert needs
 * no started instance when given the transaction's client as `db`. Tenant transactions run as
 * the RLS role, which has no rights on pg-boss's tables, so the insert resets to the service
 * role first; the transaction (and so atomicity with the business rows) is unchanged.
 */
export function jobQueue(databaseUrl: string): JobQueue {
  const boss = createBoss(databaseUrl, { supervise: false, schedule: false });
  return {
    async insert(client, jobs) {
      if (!jobs.length) return;
      await client.query('RESET ROLE');
      await boss.insert(jobs, { db: { executeSql: (text: string, values: unknown[]) => client.query(text, values) } });
    },
  };
}
