/**
 * Cluster mode (CLICKHOUSE_CLUSTER): how the single-node schema of analytics/migrations/ maps to
 * a sharded one. Every table that grows with traffic is split: a shard-local table
 * `<table>_local` on every node, and under the table's own name a `Distributed` table over them,
 * so every query of analytics/activities/ and analytics/export/ and every insert of the pump
 * (analytics/mail-events.ts) runs unchanged, and data teams query the same names in both modes.
 * Materialized views live on the local side: each node's view copies the rows inserted into its
 * own mail_events_local into its own sorted copies.
 *
 * The sharding key of the four mail tables: cityHash64(msg_id). Why (docs/analytics.md,
 * "Cluster mode"):
 *  - idempotence: every copy of a row (a batch shipped twice, a re-flagged event, each snapshot
 *    of a mail) carries the same msg_id, so all copies land on one shard, where
 *    ReplacingMergeTree and FINAL (applied per shard) merge them as on a single node;
 *  - exact correlated reads: a message's mails and all their events share a shard, so the
 *    listings' subqueries that tie one table to another (unopened: a mail's opens; group_by
 *    msg_id: the recipients of a message) can run on each shard against its local tables
 *    (distributed_product_mode = 'local', analytics/activities/query.ts) and miss nothing;
 *  - the grouped listings (group_by mail_id and msg_id) aggregate each group on one shard.
 * The price: one message's mails and events sit on one shard, so a send to a million recipients
 * is not spread; the tenant's many messages are.
 */
export const SHARDING_KEYS: Readonly<Record<string, string>> = {
  mail_events: 'cityHash64(msg_id)',
  mail_events_by_msg: 'cityHash64(msg_id)',
  mail_events_by_group: 'cityHash64(msg_id)',
  mails: 'cityHash64(msg_id)',
  // DMARC reports (008): every copy of a report, and all of a domain's reports, on one shard, so
  // FINAL merges the copies and a domain's sources are summed where they lie.
  dmarc_reports: 'cityHash64(instance_id, domain)',
  dmarc_records: 'cityHash64(instance_id, domain)',
  // The per-provider counts (010): a bucket's row, and all its copies, on one shard, so FINAL
  // keeps its newest; the marks are written by each node's views where their rows land.
  count_marks: 'cityHash64(instance_id, source, bucket)',
  provider_counts: 'cityHash64(instance_id, source, bucket)',
};

export const LOCAL_SUFFIX = '_local';

/** The statements of one migration statement in cluster mode, and where each runs. */
export interface ClusterStatement {
  query: string;
  /** 'each': DDL, on every node (or once with ON CLUSTER); 'once': data, once through the Distributed tables. */
  runs: 'each' | 'once';
}

const TABLE_NAMES = Object.keys(SHARDING_KEYS);
const LOCAL_NAME = new RegExp(`\\b(${TABLE_NAMES.join('|')})\\b`, 'g');
// The statement kinds the migrations use; a migration with another kind is refused in cluster mode.
const CREATE_TABLE = /^\s*CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+(\w+)\b/i;
const ALTER_TABLE = /^\s*ALTER\s+TABLE\s+(\w+)\s+(ADD|DROP|MODIFY|RENAME|COMMENT|CLEAR)\s+(COLUMN|INDEX|TTL|SETTING)?/i;
const CREATE_VIEW = /^\s*CREATE\s+MATERIALIZED\s+VIEW\s+IF\s+NOT\s+EXISTS\s+(\w+)\b/i;
const INSERT_SELECT = /^\s*INSERT\s+INTO\s+\w+/i;
const DDL_HEAD = /^(\s*(?:CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS|CREATE\s+MATERIALIZED\s+VIEW\s+IF\s+NOT\s+EXISTS|ALTER\s+TABLE)\s+)(\w+)/i;

/** A ClickHouse string literal. */
const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export interface ClusterTarget {
  /** The name in <remote_servers>. */
  cluster: string;
  database: string;
  /**
   * true: one statement for the whole cluster (`ON CLUSTER`, needs Keeper's distributed DDL
   * queue), and the local tables replicated (Replicated*MergeTree, Keeper again). false: the
   * caller runs each DDL statement on every node itself (the embedded cluster: no Keeper).
   */
  onCluster: boolean;
}

/**
 * The cluster form of one single-node migration statement, in order:
 *  - CREATE TABLE of a sharded table: the local table, then the Distributed one over it;
 *  - ALTER of a sharded table: on the local table, then (columns only) on the Distributed one,
 *    whose column list must follow;
 *  - CREATE MATERIALIZED VIEW: on the local side, reading and writing local tables;
 *  - INSERT ... SELECT (a backfill): once, as written, through the Distributed tables (the rows
 *    go back to the shard the sharding key names: the one they came from);
 *  - anything on an unsharded table (service_info): as it is, on every node.
 */
export function clusterStatements(statement: string, target: ClusterTarget): ClusterStatement[] {
  if (INSERT_SELECT.test(statement)) return [{ query: statement, runs: 'once' }];
  const on = (q: string) => (target.onCluster ? q.replace(DDL_HEAD, `$1$2 ON CLUSTER ${target.cluster}`) : q);
  const local = (q: string) => q.replace(LOCAL_NAME, `$1${LOCAL_SUFFIX}`);
  const replicated = (q: string) => (target.onCluster ? q.replace(/\bENGINE\s*=\s*(Replacing|Summing|Aggregating)?MergeTree\b/i, 'ENGINE = Replicated$1MergeTree') : q);

  const created = CREATE_TABLE.exec(statement)?.[1];
  if (created !== undefined && SHARDING_KEYS[created]) {
    const key = SHARDING_KEYS[created];
    return [
      { query: on(replicated(local(statement))), runs: 'each' },
      {
        query: on(
          `CREATE TABLE IF NOT EXISTS ${created} AS ${created}${LOCAL_SUFFIX}
     ENGINE = Distributed(${literal(target.cluster)}, ${literal(target.database)}, ${literal(created + LOCAL_SUFFIX)}, ${key})`,
        ),
        runs: 'each',
      },
    ];
  }
  const altered = ALTER_TABLE.exec(statement);
  if (altered && SHARDING_KEYS[altered[1]!]) {
    const onColumn = (altered[3] ?? '').toUpperCase() === 'COLUMN';
    return [
      { query: on(local(statement)), runs: 'each' },
      ...(onColumn ? [{ query: on(statement), runs: 'each' as const }] : []),
    ];
  }
  if (CREATE_VIEW.test(statement) || created !== undefined || (altered && !SHARDING_KEYS[altered[1]!])) {
    return [{ query: on(replicated(local(statement))), runs: 'each' }];
  }
  throw new Error(`cluster mode has no rule for this migration statement: ${statement.trim().slice(0, 80)}`);
}
