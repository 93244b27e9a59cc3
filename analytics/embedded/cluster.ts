import { join, resolve } from 'node:path';
import { preferredPort } from '../../config/ports.js';
import { secretFile } from '../../config/secret-file.js';
import { EMBEDDED_USER, startEmbeddedClickHouse, type EmbeddedClickHouse } from './server.js';

/**
 * An embedded N-shard ClickHouse cluster for dev, tests and `npm start` with CLICKHOUSE_SHARDS:
 * N embedded servers (server.ts), each also listening on a loopback TCP port, all given the same
 * `<remote_servers>` entry naming every one of them as a shard of one replica. Distributed tables
 * (analytics/sharding.ts) then spread rows over the shards and gather reads from them, as on a
 * real cluster. No Keeper: the embedded launcher runs ClickHouse's clickhouse-local entry point,
 * which does not start the Keeper server a `<keeper_server>` section asks of clickhouse-server, so
 * `ON CLUSTER` has no distributed DDL queue here; the migrator runs each statement on every node
 * instead (analytics/migrate.ts), which is why it is handed the shards' URLs.
 */
export interface EmbeddedClickHouseCluster {
  /** The cluster's name in <remote_servers>: what CLICKHOUSE_CLUSTER names. */
  name: string;
  /** Shard 1 first; each with its own credentials in `url`. */
  shards: Array<EmbeddedClickHouse & { tcpPort: number }>;
  /** Stops every shard; idempotent. */
  stop(): Promise<void>;
}

export interface EmbeddedClickHouseClusterOptions {
  /** Shard i's data lives in `<dir>/shard-<i>` (1-based), each a data directory as server.ts's. */
  dir: string;
  shards: number;
  /** Default `cartero`. */
  name?: string;
  /** Preferred HTTP and TCP ports per shard (a restart reuses the recorded ones when free). */
  ports?: ReadonlyArray<{ http?: number; tcp?: number } | undefined>;
  /** Ports not to pick (the caller's other services). */
  taken?: Set<number>;
  log?: (msg: string) => void;
}

export const DEFAULT_CLUSTER_NAME = 'cartero';

export function shardDir(dir: string, shard: number): string {
  return join(resolve(dir), `shard-${shard}`);
}

export async function startEmbeddedClickHouseCluster(opts: EmbeddedClickHouseClusterOptions): Promise<EmbeddedClickHouseCluster> {
  if (!Number.isInteger(opts.shards) || opts.shards < 1) throw new Error(`a cluster needs at least one shard, got ${opts.shards}`);
  const name = opts.name ?? DEFAULT_CLUSTER_NAME;
  const taken = opts.taken ?? new Set<number>();
  const nodes: Array<{ dir: string; http: number; tcp: number; password: string }> = [];
  for (let i = 1; i <= opts.shards; i++) {
    const dir = shardDir(opts.dir, i);
    // Every node must know every other's password before any starts: read (or make) them all first.
    const password = secretFile(join(dir, 'password'));
    const http = await preferredPort(opts.ports?.[i - 1]?.http, taken);
    const tcp = await preferredPort(opts.ports?.[i - 1]?.tcp, taken);
    nodes.push({ dir, http, tcp, password });
  }
  const config = remoteServersXml(name, nodes);
  const started: Array<EmbeddedClickHouse & { tcpPort: number }> = [];
  const stopAll = async () => {
    await Promise.all(started.map((s) => s.stop()));
  };
  try {
    // One after another: each start is a few seconds of CPU, and this machine has two cores.
    for (const node of nodes) {
      const server = await startEmbeddedClickHouse({ dir: node.dir, port: node.http, tcpPort: node.tcp, extraConfig: config, log: opts.log });
      started.push({ ...server, tcpPort: node.tcp });
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return { name, shards: started, stop: () => (stopping ??= stopAll()) };
}

/**
 * The cluster as every node sees it: shard i is node i, one replica each, reached over TCP as the
 * embedded user with that node's password (so the file is written mode 0600 by server.ts).
 */
function remoteServersXml(name: string, nodes: ReadonlyArray<{ tcp: number; password: string }>): string {
  const shards = nodes
    .map(
      (n) =>
        `      <shard><replica><host>127.0.0.1</host><port>${n.tcp}</port><user>${EMBEDDED_USER}</user><password>${n.password}</password></replica></shard>`,
    )
    .join('\n');
  return `<?xml version="1.0"?>
<!-- Written by analytics/embedded/cluster.ts on every start of the cluster; edits here are overwritten. -->
<clickhouse>
  <remote_servers>
    <${name}>
${shards}
    </${name}>
  </remote_servers>
</clickhouse>
`;
}
