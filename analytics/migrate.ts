import { createClickHouseClient, databaseOf, type ClickHouseClient } from './client.js';
import { migrations as registered, type Migration } from './migrations/index.js';
import { clusterStatements, type ClusterStatement } from './sharding.js';

export interface MigrateOptions {
  /**
   * Serializes concurrent migrators (release dynos, parallel `npm start`s); the caller passes a
   * Postgres advisory lock. Without it, concurrent runs are still safe (statements are
   * idempotent, a doubly recorded version collapses in ReplacingMergeTree), only wasteful.
   */
  lock?: <T>(fn: () => Promise<T>) => Promise<T>;
  log?: (m: string) => void;
  /** The migrations to apply; the registered list by default. For tests of the runner itself. */
  migrations?: readonly Migration[];
  /**
   * Cluster mode (CLICKHOUSE_CLUSTER; analytics/sharding.ts): shard-local tables and Distributed
   * tables over them. With `nodes` (every node's URL, the database in its path, as `url`), each
   * DDL statement runs on every node in turn: the embedded cluster, which has no Keeper for
   * ON CLUSTER (analytics/embedded/cluster.ts). Without, each runs once through `url` with
   * ON CLUSTER, as a real cluster with Keeper wants. Either way the versions are recorded, and
   * read, on the node of `url` (and, with `nodes`, on every node).
   */
  cluster?: { name: string; nodes?: readonly string[] };
}

/**
 * How long one migration statement may take. A backfill (004, 005: INSERT ... SELECT over every
 * open and click) runs for minutes on a large database and the server answers only at its end;
 * at the client's default 30 s the request would fail while the INSERT went on in the server,
 * the version would stay unrecorded, and every restart would start another full backfill.
 */
const STATEMENT_TIMEOUT_MS = 6 * 3600_000;

// The runner owns this table, so it exists before migration 001 and is never migrated itself.
const CREATE_SCHEMA_MIGRATIONS = `
  CREATE TABLE IF NOT EXISTS schema_migrations
  (
    version    String,
    name       String,
    applied_at DateTime64(3, 'UTC')
  )
  ENGINE = ReplacingMergeTree
  ORDER BY version`;

/**
 * Brings the ClickHouse database named by `url` (see databaseOf) up to date: creates it if
 * missing, then applies, in order, each migration whose version is not yet recorded in
 * schema_migrations, recording it only after all its statements succeeded.
 */
export async function migrateClickHouse(url: string, opts: MigrateOptions = {}): Promise<{ applied: string[] }> {
  const list = opts.migrations ?? registered;
  checkOrder(list);
  const run = () => migrate(url, list, opts.log ?? (() => {}), opts.cluster);
  return opts.lock ? opts.lock(run) : run();
}

async function migrate(
  url: string,
  list: readonly Migration[],
  log: (m: string) => void,
  cluster: MigrateOptions['cluster'],
): Promise<{ applied: string[] }> {
  const database = databaseOf(url);
  // Per node: the embedded cluster's nodes, each addressed; else the one URL (ON CLUSTER if a cluster).
  const nodeUrls = cluster?.nodes?.length ? cluster.nodes : [url];
  const onCluster = cluster !== undefined && !cluster.nodes?.length;
  const onClusterClause = onCluster ? ` ON CLUSTER ${cluster!.name}` : '';
  for (const node of nodeUrls) await ensureDatabase(node, databaseOf(node), log, onClusterClause);

  const clients = nodeUrls.map((node) => createClickHouseClient(node, undefined, { requestTimeoutMs: STATEMENT_TIMEOUT_MS }));
  const [client] = clients as [ClickHouseClient, ...ClickHouseClient[]];
  try {
    for (const c of clients) await c.command({ query: CREATE_SCHEMA_MIGRATIONS.replace('schema_migrations', `schema_migrations${onClusterClause}`) });
    const done = await recordedVersions(client);
    if (cluster) await refuseSingleNodeSchema(client, database);
    const applied: string[] = [];
    for (const m of list) {
      if (done.has(m.version)) continue;
      const label = `${m.version}_${m.name}`;
      log(`ClickHouse ${database}: applying migration ${label}`);
      const statements: ClusterStatement[] = cluster
        ? m.up.flatMap((q) => clusterStatements(q, { cluster: cluster.name, database, onCluster }))
        : m.up.map((query) => ({ query, runs: 'once' }));
      for (const { query, runs } of statements) {
        // log_comment tags the statement in the server's query log with the migration it came from.
        // A backfill through Distributed tables returns once the shards hold its rows, not when
        // they are queued on this node.
        const settings = { log_comment: `migration ${label}`, ...(cluster ? { distributed_foreground_insert: 1 } : {}) };
        for (const c of runs === 'each' ? clients : [client]) await c.command({ query, clickhouse_settings: settings });
      }
      for (const c of clients) {
        await c.command({
          query: `INSERT INTO schema_migrations (version, name, applied_at)
                  SELECT {version:String}, {name:String}, now64(3, 'UTC')`,
          query_params: { version: m.version, name: m.name },
        });
      }
      applied.push(m.version);
    }
    return { applied };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

async function ensureDatabase(url: string, database: string, log: (m: string) => void, onCluster: string): Promise<void> {
  // The target database may not exist yet, and a client bound to it would fail every request.
  const admin = createClickHouseClient(url, 'default');
  try {
    const rs = await admin.query({
      query: 'SELECT count() AS n FROM system.databases WHERE name = {db:String}',
      query_params: { db: database },
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{ n: string | number }>();
    // Checked first so a production user without CREATE DATABASE rights works once it exists.
    if (Number(row?.n) > 0) return;
    log(`ClickHouse: creating database ${database}`);
    await admin.command({
      query: `CREATE DATABASE IF NOT EXISTS {db:Identifier}${onCluster}`,
      query_params: { db: database },
    });
  } finally {
    await admin.close();
  }
}

/**
 * Cluster mode on a database migrated as a single node would leave its plain tables in place and
 * record nothing new: refuse, and say how to move (a new database, docs/operations.md).
 */
async function refuseSingleNodeSchema(client: ClickHouseClient, database: string): Promise<void> {
  const rs = await client.query({
    query: "SELECT engine FROM system.tables WHERE database = {db:String} AND name = 'mail_events'",
    query_params: { db: database },
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ engine: string }>();
  if (row && row.engine !== 'Distributed') {
    throw new Error(
      `CLICKHOUSE_CLUSTER is set but ClickHouse database ${database} holds a single-node schema (mail_events is ${row.engine}); ` +
        'cluster mode needs a new database: docs/operations.md, "Moving a single-node deployment to a cluster"',
    );
  }
}

async function recordedVersions(client: ClickHouseClient): Promise<Set<string>> {
  // DISTINCT: a version recorded twice (unlocked concurrent runs) stays two rows until a merge.
  const rs = await client.query({ query: 'SELECT DISTINCT version FROM schema_migrations', format: 'JSONEachRow' });
  return new Set((await rs.json<{ version: string }>()).map((r) => r.version));
}

function checkOrder(list: readonly Migration[]): void {
  for (let i = 1; i < list.length; i++) {
    if (!(list[i - 1]!.version < list[i]!.version)) {
      throw new Error(`ClickHouse migrations out of order: ${list[i - 1]!.version} before ${list[i]!.version}`);
    }
  }
}
