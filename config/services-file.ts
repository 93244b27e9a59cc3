import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * $DATA_DIR/services.json records where the embedded servers of a data dir listen, so the CLI
 * (and a second `npm start`) reach the same databases, and ports are reused across restarts,
 * and the pid of every process `npm start` runs.
 * Their URLs carry their credentials, so the file is mode 0600 (writeServices).
 */
export interface ServicesFile {
  /** The embedded Postgres (its postmaster's pid). */
  postgres?: { port: number; url: string; pid?: number };
  /** The embedded ClickHouse (its launcher's pid); with CLICKHOUSE_SHARDS > 1, shard 1 of the cluster (the dynos' CLICKHOUSE_URL). */
  clickhouse?: { port: number; url: string; pid?: number; cluster?: string };
  /** CLICKHOUSE_SHARDS > 1: every shard of the embedded cluster, shard 1 first; each URL queries that shard alone. */
  clickhouse_shards?: Array<{ port: number; tcp_port: number; url: string; pid: number }>;
  /** The mailbox simulator (smtp/simulator.ts), when SMTP_URL is not set; it runs in `npm start`'s process. */
  smtp?: { port: number; url: string; pid?: number };
  /** The worker's inbound SMTP listener for bounces and complaints (INBOUND_SMTP_PORT), shared by every worker dyno. */
  inbound_smtp?: { port: number; url: string };
  /** The worker's submission listener (SUBMISSION_PORT, STARTTLS and AUTH), shared by every worker dyno. */
  submission_smtp?: { port: number; url: string };
  /** The public URL; pid: `npm start`'s process, which holds the socket every web dyno serves. */
  web?: { port: number; url: string; pid: number };
  /** The web dynos' internal listener on loopback (/healthz, /readyz, /metrics: INTERNAL_PORT). */
  web_internal?: { port: number; url: string };
  /**
   * Every dyno `npm start` runs, named as Heroku names them (web.1, worker.2), rewritten when one
   * exits (pid null until it is restarted) and when it is restarted (its new pid).
   */
  dynos?: Array<{ name: string; pid: number | null }>;
}

export function servicesPath(dataDir: string): string {
  return join(dataDir, 'services.json');
}

export function readServices(dataDir: string): ServicesFile {
  const file = servicesPath(dataDir);
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ServicesFile;
  } catch {
    return {};
  }
}

export function writeServices(dataDir: string, services: ServicesFile): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 }); // private (config/data-dir.ts)
  const tmp = servicesPath(dataDir) + '.tmp';
  // Holds the embedded servers' URLs with their passwords (Postgres, ClickHouse, the mailbox
  // simulator): readable by the owner only, also when a crash left a .tmp with another mode.
  writeFileSync(tmp, JSON.stringify(services, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, servicesPath(dataDir));
}
