import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, realpathSync } from 'node:fs';
import { chmod, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../config/paths.js';
import { secretFile } from '../../config/secret-file.js';

/**
 * A ClickHouse server run from the npm-shipped libchdb.so for dev, tests and `npm start`.
 * Production sets CLICKHOUSE_URL to a real server instead; nothing else may depend on which.
 */
export interface EmbeddedClickHouse {
  /**
   * Server root with its credentials (`http://cartero:<password>@127.0.0.1:<port>`), without a
   * database path: append `/<database>` for createClickHouseClient. A secret: never log it
   * (`where` is the same without the credentials).
   */
  url: string;
  /** `http://127.0.0.1:<port>`: for messages. */
  where: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

export interface EmbeddedClickHouseOptions {
  /**
   * Data directory; also holds config.xml, users.xml, clickhouse.log and `password` (generated
   * on the first start, mode 0600, reused after). Created if missing.
   */
  dir: string;
  /** Loopback HTTP port; a free one is picked when omitted. */
  port?: number;
  /**
   * Loopback port of the native TCP interface, which only a cluster needs (Distributed tables
   * talk to the other shards over it: cluster.ts); no TCP listener when omitted.
   */
  tcpPort?: number;
  /**
   * Extra configuration merged over config.xml (written to config.d/cartero-extra.xml, mode 0600:
   * a cluster's <remote_servers> carries the shards' passwords); removed when omitted.
   */
  extraConfig?: string;
  log?: (msg: string) => void;
}

const LAUNCHER_SOURCE = join(projectRoot, 'analytics', 'embedded', 'launcher.c');
// Outside git and wiped by a clean install, which is when a rebuild is wanted anyway.
const CACHE_DIR = join(projectRoot, 'node_modules', '.cache', 'cartero');
const GCC_FLAGS = ['-O2', '-Wall'];

const CONFIG_FILE = 'config.xml';
const USERS_FILE = 'users.xml';
const PASSWORD_FILE = 'password';
const LOG_FILE = 'clickhouse.log';
const EXTRA_CONFIG_FILE = 'cartero-extra.xml';
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
const PORT_ATTEMPTS = 3;
/** How clickhouse-local prints an exception (e.g. "Code: 210. DB::Exception: Listen [...] failed"). */
const STATEMENT_FAILED = /^Code: \d+\. DB::Exception/m;

// Starts the listeners, then keeps the clickhouse-local "query" (and so the process) alive.
// sleepEachRow refuses to sleep more than 3 s per block (TOO_SLOW), hence one row per block.
// TCP first: the statements run in order and a failed one stops the rest (launcher.c), so an HTTP
// listener that answers means the TCP one was opened too.
const KEEP_ALIVE = 'SELECT sleepEachRow(1) FROM system.numbers SETTINGS max_block_size = 1 FORMAT Null';
const keepAliveQuery = (tcp: boolean) => `${tcp ? 'SYSTEM START LISTEN TCP; ' : ''}SYSTEM START LISTEN HTTP; ${KEEP_ALIVE}`;

// Verified against libchdb 26.7: this server creates no system.*_log tables unless the config
// declares them, so the way to keep them bounded is to declare none. Two traps, both verified:
// clickhouse-local silently loads ./config.xml from its working directory when no --config-file
// is given, and `<query_log remove="1"/>` in a main config file *enables* query_log with default
// settings (no TTL). Hence: always pass this file explicitly, and never list a log section here
// without a <ttl>. Files in <dir>/config.d/ are merged on top of this one.
//
// Authentication, also verified against libchdb 26.7. clickhouse-local authenticates its own
// session (the one running keepAliveQuery) as `default` with an empty password from 127.0.0.1,
// with no option to change either (no --user, no config key; a <networks> rule that excludes
// 127.0.0.1, a password, or no `default` at all each make the launcher fail); and every loopback
// connection can come from 127.0.0.1 too. So `default` must stay passwordless, and every port is
// closed to it:
//  - http_handlers: a request reaches the query handler only when it carries this server's
//    credentials exactly (Basic auth as @clickhouse/client sends it, or the X-ClickHouse-User /
//    X-ClickHouse-Key pair); anything else gets a 401 from a static handler. /ping stays open
//    (it says "Ok." and nothing else). No <defaults/>: the built-in handlers would answer anyone.
//  - the native TCP port (cluster mode) has no such handlers, so users.xml closes it: `default`'s
//    profile allows one session at a time (max_sessions_for_user), and clickhouse-local's own
//    session holds it from before any listener starts until the process ends; any other login as
//    `default` is refused ("has overflown session count"). Otherwise anyone on the machine
//    could log in there and run SYSTEM STOP LISTEN HTTP (issue 37).
//  - users.xml also keeps `default` to starting listeners and reading system.numbers (what the
//    keep-alive query needs); the user `cartero` has the password (stored as its SHA-256 only),
//    and the shards reach each other as `cartero` (cluster.ts).
// A refused native login throws out of ClickHouse's TCP handler, which would abort a
// non-interactive clickhouse-local: launcher.c explains why it runs it "interactive".
// The credentials also sit in config.xml, so both files are written mode 0600 like `password`.
const USER = 'cartero';
const KEEP_ALIVE_PROFILE = 'keep_alive';
/** The user every embedded server's URL names (cluster.ts: how shards reach each other). */
export const EMBEDDED_USER = USER;

function configXml(dir: string, password: string): string {
  const basic = `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;
  const queryHandler = `<handler><type>dynamic_query_handler</type><query_param_name>query</query_param_name></handler>`;
  return `<?xml version="1.0"?>
<!-- Written by analytics/embedded/server.ts on every start; edits here are overwritten.
     No system *_log sections, on purpose: without them the server creates no log tables, which
     is what keeps them from filling the disk (see configXml there for the traps). A log
     enabled via config.d/ must carry a <ttl>. The http_handlers admit only this server's
     credentials (see there why the server's own users cannot do it alone). -->
<clickhouse>
  <users_config>${join(dir, USERS_FILE)}</users_config>
  <http_handlers>
    <rule><url>/ping</url><methods>GET,HEAD</methods><handler><type>static</type><response_content>Ok.
</response_content></handler></rule>
    <rule><headers><Authorization>${basic}</Authorization></headers>${queryHandler}</rule>
    <rule><headers><X-ClickHouse-User>${USER}</X-ClickHouse-User><X-ClickHouse-Key>${xmlText(password)}</X-ClickHouse-Key></headers>${queryHandler}</rule>
    <rule><handler><type>static</type><status>401</status><content_type>text/plain; charset=UTF-8</content_type><response_content>Authentication required: user ${USER}, the password is in the file \`${PASSWORD_FILE}\` of this server's data directory
</response_content></handler></rule>
  </http_handlers>
</clickhouse>
`;
}

/** Text for an XML element: the generated password needs none of this, one an operator wrote might. */
function xmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function usersXml(password: string): string {
  const sha256 = createHash('sha256').update(password).digest('hex');
  return `<?xml version="1.0"?>
<!-- Written by analytics/embedded/server.ts on every start; edits here are overwritten. -->
<clickhouse>
  <users>
    <!-- clickhouse-local's own session (the keep-alive query); unreachable over HTTP (the
         handlers) and over TCP (its one session is taken by clickhouse-local). -->
    <default>
      <no_password/>
      <networks><host>localhost</host></networks>
      <profile>${KEEP_ALIVE_PROFILE}</profile>
      <quota>default</quota>
      <grants><query>GRANT SYSTEM LISTEN ON *.*</query><query>GRANT SELECT ON system.numbers</query></grants>
    </default>
    <${USER}>
      <password_sha256_hex>${sha256}</password_sha256_hex>
      <networks><host>localhost</host></networks>
      <profile>default</profile>
      <quota>default</quota>
    </${USER}>
  </users>
  <profiles>
    <default/>
    <${KEEP_ALIVE_PROFILE}><max_sessions_for_user>1</max_sessions_for_user></${KEEP_ALIVE_PROFILE}>
  </profiles>
  <quotas><default/></quotas>
</clickhouse>
`;
}

class PortTakenError extends Error {}

export async function startEmbeddedClickHouse(opts: EmbeddedClickHouseOptions): Promise<EmbeddedClickHouse> {
  const dir = resolve(opts.dir);
  // Private, like all of DATA_DIR (config/data-dir.ts): its parts hold every tenant's events.
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const launcher = await launcherBinary();
  const password = secretFile(join(dir, PASSWORD_FILE));
  await writePrivate(join(dir, USERS_FILE), usersXml(password));
  await writePrivate(join(dir, CONFIG_FILE), configXml(dir, password));
  // Written or removed on every start: a node started once in a cluster and then alone must not
  // keep the cluster's configuration.
  const extra = join(dir, 'config.d', EXTRA_CONFIG_FILE);
  if (opts.extraConfig !== undefined) {
    await mkdir(dirname(extra), { recursive: true, mode: 0o700 });
    await writePrivate(extra, opts.extraConfig);
  } else {
    await rm(extra, { force: true });
  }
  // Keep the previous run's log (crash evidence) but no more, so restarts cannot grow it forever.
  await rename(join(dir, LOG_FILE), join(dir, `${LOG_FILE}.1`)).catch(ignoreMissing);

  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freeLoopbackPort());
    try {
      return await launch(launcher, dir, port, opts.tcpPort, password, opts.log);
    } catch (err) {
      // A picked port can be taken between our probe and the server's bind (parallel tests).
      if (err instanceof PortTakenError && opts.port === undefined && attempt < PORT_ATTEMPTS) continue;
      throw err;
    }
  }
}

async function launch(
  launcher: string,
  dir: string,
  port: number,
  tcpPort: number | undefined,
  password: string,
  log: ((msg: string) => void) | undefined,
): Promise<EmbeddedClickHouse> {
  const started = Date.now();
  // `url` goes to CLICKHOUSE_URL; `where` is what messages say.
  const where = `http://127.0.0.1:${port}`;
  const url = `http://${USER}:${password}@127.0.0.1:${port}`;
  const logPath = join(dir, LOG_FILE);
  const logFd = openSync(logPath, 'a', 0o600);
  // Where this attempt's lines begin: an earlier attempt's "Address already in use" (a port race,
  // retried by the caller) must not fail this one.
  const logStart = fstatSync(logFd).size;
  let child: ChildProcess;
  try {
    child = spawn(
      launcher,
      [
        libchdbPath(),
        `--config-file=${join(dir, CONFIG_FILE)}`,
        `--path=${dir}`,
        '--listen_host=127.0.0.1',
        `--http_port=${port}`,
        ...(tcpPort !== undefined ? [`--tcp_port=${tcpPort}`] : []),
        '--multiquery',
        '--query',
        keepAliveQuery(tcpPort !== undefined),
      ],
      {
        cwd: dir,
        // Own process group: a terminal Ctrl-C must reach only us, so the service can stop its
        // writers before it stops this server. The launcher's PDEATHSIG covers our crashes.
        detached: true,
        stdio: ['ignore', logFd, logFd],
        env: { ...process.env, CARTERO_LAUNCHER_PARENT: String(process.pid) },
      },
    );
  } finally {
    closeSync(logFd); // the child holds its own copy
  }
  // Do not keep the event loop alive for the server: a caller that forgets stop() exits anyway,
  // and PDEATHSIG then stops the server.
  child.unref();

  const exited = new Promise<string>((done) => {
    child.once('exit', (code, signal) => done(signal ? `signal ${signal}` : `exit code ${code}`));
    child.once('error', (err) => done(err.message));
  });
  let exitedHow: string | undefined;
  void exited.then((how) => (exitedHow = how));

  try {
    await waitUntilServing(where, password, dir, logPath, logStart, () => exitedHow);
  } catch (err) {
    await terminate(child, exited);
    const tail = await logTail(logPath, 4_000, logStart);
    const message = `embedded ClickHouse in ${dir} on port ${port}: ${(err as Error).message}\n${tail}`;
    throw err instanceof PortTakenError || /Address already in use/.test(tail)
      ? new PortTakenError(message)
      : new Error(message);
  }

  const pid = child.pid!;
  log?.(`embedded ClickHouse ${where} (pid ${pid}, data ${dir}) ready in ${Date.now() - started} ms`);
  let stopping: Promise<void> | undefined;
  // Nothing restarts it, so at least say so: later ClickHouse errors then have an explanation.
  void exited.then((how) => stopping || log?.(`embedded ClickHouse ${where} exited unexpectedly (${how})`));
  return {
    url,
    where,
    port,
    pid,
    stop: () => (stopping ??= terminate(child, exited).then(() => log?.(`embedded ClickHouse ${where} stopped`))),
  };
}

async function waitUntilServing(
  where: string,
  password: string,
  dir: string,
  logPath: string,
  logStart: number,
  exitedHow: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const how = exitedHow();
    if (how !== undefined) throw new Error(`exited before serving (${how})`);
    if (Date.now() > deadline) throw new Error(`not answering /ping after ${START_TIMEOUT_MS} ms`);
    // A failed statement (a listener's port taken) does not end the process (launcher.c); it
    // prints the exception, which the log of this start holds.
    if (STATEMENT_FAILED.test(await logTail(logPath, 4_000, logStart))) throw new Error('a statement of keepAliveQuery failed');
    if (await answersPing(where)) break;
    await sleep(50);
  }
  // /ping cannot tell our server from another process already listening on this port (our own
  // launcher then fails to bind, but only after the other one answered). Ask which data directory
  // it serves: another ClickHouse answers with another one, or refuses our credentials.
  const served = await dataDirOf(where, password);
  if (served === undefined) throw new PortTakenError('the port is served by another server, which refuses this one\'s credentials');
  if (realpathSync(served) !== realpathSync(dir)) {
    throw new PortTakenError(`the port is served by another ClickHouse (data in ${served})`);
  }
  // The whole point of the password: refuse to hand out a server that answers anyone.
  const anonymous = await fetch(`${where}/?query=${encodeURIComponent('SELECT 1')}`, { signal: AbortSignal.timeout(5_000) });
  await anonymous.arrayBuffer();
  if (anonymous.status !== 401) throw new Error(`answers a query without credentials (HTTP ${anonymous.status}); see configXml`);
}

async function terminate(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.ref(); // keep the process alive until the server is really gone
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), STOP_GRACE_MS)));
  if ((await Promise.race([exited, gaveUp])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

async function answersPing(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** The served data path; undefined when the server refuses our credentials (not ours). */
async function dataDirOf(where: string, password: string): Promise<string | undefined> {
  const res = await fetch(where, {
    method: 'POST',
    headers: { 'X-ClickHouse-User': USER, 'X-ClickHouse-Key': password },
    body: "SELECT path FROM system.disks WHERE name = 'default' FORMAT TSVRaw",
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await res.text()).trim();
  if (res.status === 401 || res.status === 403) return undefined;
  if (!res.ok) throw new Error(`embedded ClickHouse ${where}: cannot read its data path: ${body}`);
  return body.replace(/\/+$/, '');
}

/** Written whole, readable by the owner only (also when an older start left the file 0644). */
async function writePrivate(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** Compiles launcher.c once per source version; safe when several processes race to do it. */
let compiled: Promise<string> | undefined;
function launcherBinary(): Promise<string> {
  return (compiled ??= compileLauncher().catch((err) => {
    compiled = undefined;
    throw err;
  }));
}

async function compileLauncher(): Promise<string> {
  const source = await readFile(LAUNCHER_SOURCE);
  const hash = createHash('sha256').update(source).update(GCC_FLAGS.join(' ')).update(process.arch).digest('hex');
  const target = join(CACHE_DIR, `chlauncher-${hash.slice(0, 16)}`);
  if (existsSync(target)) return target;
  await mkdir(CACHE_DIR, { recursive: true });
  // Compile to a private name and rename: rename is atomic, so a concurrent starter sees either
  // no binary or a complete one, never a half-written file.
  const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await promisify(execFile)('gcc', [...GCC_FLAGS, '-o', tmp, LAUNCHER_SOURCE, '-ldl']);
    // No secret (built from launcher.c) and not under DATA_DIR: runnable by any user of this
    // checkout, as before `npm start` compiled it under umask 077 (config/data-dir.ts).
    await chmod(tmp, 0o755);
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    const stderr = (err as { stderr?: string }).stderr;
    throw new Error(`cannot compile ${LAUNCHER_SOURCE} with gcc: ${stderr || (err as Error).message}`);
  }
  return target;
}

function libchdbPath(): string {
  const pkg = createRequire(import.meta.url).resolve('@chdb/lib-linux-x64-gnu/package.json');
  return join(dirname(pkg), 'libchdb.so');
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? done(port) : reject(new Error('no free loopback port'))));
    });
  });
}

/** The log's last `bytes`, none of them before `from` (the start of one launch's lines). */
async function logTail(path: string, bytes = 4_000, from = 0): Promise<string> {
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const start = Math.max(from, size - bytes, 0);
      if (start >= size) return '';
      const buf = Buffer.alloc(size - start);
      await file.read(buf, 0, buf.length, start);
      return buf.toString('utf8');
    } finally {
      await file.close();
    }
  } catch {
    return '(no log)';
  }
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err;
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
