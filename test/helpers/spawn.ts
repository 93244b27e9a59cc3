import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../config/paths.js';
import { freePort } from '../../config/ports.js';
import { postgresRunAs } from '../../sql/embedded.js';
import { sleep, waitFor, type Teardown } from './wait.js';
export { sleep } from './wait.js';

/**
 * Child processes for tests of the real entry points (Procfile dynos, `npm start`, the CLI).
 * Every process started here is killed at teardown whatever the test's outcome, so a failed
 * assertion never leaves a server behind.
 */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Proc {
  pid: number;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Set once the process has exited. */
  exit(): Exit | undefined;
  exited: Promise<Exit>;
  /** Resolves with the first match in stdout; rejects on exit or timeout (with the output). */
  waitForStdout(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** The exit, or undefined when the process is still running after `ms`. */
  waitExit(ms: number): Promise<Exit | undefined>;
  /** To the process, or to its whole process group when spawned detached (what a terminal does). */
  signal(sig: NodeJS.Signals): void;
}

/**
 * DKIM_KEY_ENCRYPTION_KEY for the web and worker dynos a test spawns against its own
 * DATABASE_URL: they refuse to start without it (config/needs.ts), as a deployment's would. One
 * value per test process, so every dyno of a file shares it, as every dyno of a deployment must.
 */
export const TEST_DKIM_KEY = randomBytes(32).toString('hex');

/** The environment of a child: the test's own, minus `remove`, plus `set`. */
export function childEnv(set: Record<string, string | undefined>, remove: string[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [...remove, 'NODE_OPTIONS']) delete env[name];
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}


/** p's value, or undefined after ms; the timer is cleared so it never holds the test process open. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until none of `pids` is alive; false if some still are after `ms`. */
export async function waitDead(pids: number[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (pids.some(alive)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * `node <script> ...args` from the project root (script relative to it, e.g.
 * `dist/runtime/web.js`). detached: the child leads its own process group, like a job started
 * from a shell, so signal() reaches it and every non-detached descendant.
 */
export function spawnNode(t: Teardown, script: string, opts: { env: NodeJS.ProcessEnv; args?: string[]; detached?: boolean }): Proc {
  const child: ChildProcess = spawn(process.execPath, [join(projectRoot, script), ...(opts.args ?? [])], {
    cwd: projectRoot,
    env: opts.env,
    detached: opts.detached ?? false,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid!;
  let out = '';
  let err = '';
  let exit: Exit | undefined;
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      for (const l of listeners) l();
      resolve(exit);
    });
    child.once('error', () => {
      exit = { code: null, signal: null };
      resolve(exit);
    });
  });
  const signal = (sig: NodeJS.Signals) => {
    if (exit) return;
    try {
      if (opts.detached) process.kill(-pid, sig);
      else child.kill(sig);
    } catch {
      /* already gone */
    }
  };

  t.teardown(async () => {
    if (!exit) {
      signal('SIGKILL');
      await within(exited, 5_000);
    } else if (opts.detached) {
      // The leader is gone; members of its group may not be.
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* no such group: nothing left */
      }
    }
  });

  return {
    pid,
    stdout: () => out,
    stderr: () => err,
    exit: () => exit,
    exited,
    signal,
    waitExit: (ms) => within(exited, ms),
    waitForStdout(pattern, ms = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`timed out after ${ms} ms`)), ms);
        const check = () => {
          const m = pattern.exec(out);
          if (m) return done(undefined, m);
          if (exit) done(new Error(`exited (${JSON.stringify(exit)})`));
        };
        const done = (e?: Error, m?: RegExpMatchArray) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (e) reject(new Error(`${script}: waiting for ${pattern}: ${e.message}\n--- stdout\n${out.slice(-3000)}\n--- stderr\n${err.slice(-3000)}`));
          else resolve(m!);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export type CliRun = (...args: string[]) => Promise<CliResult>;

/**
 * A runner for `node bin/cartero.js ...args` with `env`; stragglers are killed at teardown.
 *
 * inProcess: the CLI runs in this process instead (cli/run.ts's runCli, what bin/cartero.js
 * calls, given `env` and capturing stdout and stderr), saving a node start and the CLI's module
 * load per command (about 0.6 s of CPU each, most of a CLI test file's time). For runs against
 * DATABASE_URL only: without it a command starts the data dir's embedded Postgres, which must
 * be the CLI process's child. `spawned` always runs the binary: a file that runs its commands in
 * process still runs some through it (the entry point, its exit codes and output streams).
 */
export function cliRunner(t: Teardown, env: NodeJS.ProcessEnv, opts: { inProcess?: boolean } = {}): CliRun & { spawned: CliRun } {
  const spawned = spawnCli(t, env);
  if (!opts.inProcess) return Object.assign(spawned, { spawned });
  if (!env.DATABASE_URL) throw new Error('cliRunner: inProcess needs DATABASE_URL in env');
  const inProcess: CliRun = async (...args) => {
    const { runCli } = await import('../../cli/run.js');
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, { env, stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
    return { code, stdout, stderr };
  };
  return Object.assign(inProcess, { spawned });
}

function spawnCli(t: Teardown, env: NodeJS.ProcessEnv): CliRun {
  const running = new Set<ChildProcess>();
  t.teardown(() => {
    for (const c of running) c.kill('SIGKILL');
  });
  return (...args) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [join(projectRoot, 'bin', 'cartero.js'), ...args], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
      running.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('close', (code) => {
        clearTimeout(timer);
        running.delete(child);
        resolve({ code, stdout, stderr });
      });
    });
}

/**
 * The single JSON object a successful CLI command prints; throws (with the output) when the
 * command failed or printed anything else.
 */
export function oneJsonObject(r: CliResult): Record<string, any> {
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  if (r.code !== 0 || lines.length !== 1 || !r.stdout.endsWith('\n')) {
    throw new Error(`expected exit 0 and one JSON line, got exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
  const value = JSON.parse(lines[0]!) as unknown;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`not a JSON object: ${lines[0]}`);
  return value as Record<string, any>;
}

/**
 * A fresh DATA_DIR, removed at teardown, made as `npm start` makes one (config/data-dir.ts), so a
 * start finds nothing to tighten: 0700, or as root 0710 with the group of the embedded Postgres's
 * user, which must pass through it. private: 0700 even as root (like a home directory: Postgres
 * then cannot pass, and its cluster goes elsewhere, see sql/embedded.ts).
 */
export function tempDataDir(t: Teardown, opts: { private?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'cartero-data-'));
  const { gid } = postgresRunAs();
  if (!opts.private && gid !== undefined) {
    chownSync(dir, process.getuid!(), gid);
    chmodSync(dir, 0o710);
  }
  t.teardown(async () => {
    for (const pid of processesOf(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await waitDead(processesOf(dir), 5_000);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/**
 * Every live process started for a data dir: those with DATA_DIR=dir in their environment
 * (supervisor, dynos, CLI and, since they inherit it, the embedded Postgres and ClickHouse) or
 * the dir on their command line.
 */
export function processesOf(dataDir: string): number[] {
  const needleEnv = `DATA_DIR=${dataDir}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (environ.includes(needleEnv) || cmdline.includes(dataDir)) pids.push(pid);
    } catch {
      /* exited meanwhile, or not ours to read */
    }
  }
  return pids.filter(alive);
}

/** The embedded Postgres postmaster of a data dir (postmaster.pid line 1), when the file exists. */
export function postmasterPid(dataDir: string): number | undefined {
  const file = join(dataDir, 'postgres', 'data', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

/** The embedded ClickHouse launcher of a data dir (its --path names the dir). */
export function clickhousePid(dataDir: string): number | undefined {
  const needle = `--path=${join(dataDir, 'clickhouse')}\0`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) return Number(entry);
    } catch {
      /* exited meanwhile */
    }
  }
  return undefined;
}

/** Direct children of a process (from /proc/<pid>/stat's ppid field). */
export function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4, after the parenthesised command name (which may contain spaces).
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) kids.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return kids;
}

/** What a shell command printed and how it exited. */
export interface ShellRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command line through /bin/sh from the project root, as a reader of the README would type it. */
export function sh(command: string, env: NodeJS.ProcessEnv, timeout = 30_000): Promise<ShellRun> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', command], { cwd: projectRoot, env, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

/**
 * A web dyno of its own process (`node dist/runtime/web.js`, as the Procfile runs it) on a test
 * file's Postgres and ClickHouse, with the DKIM key every web dyno needs to start; `extra` adds or
 * overrides variables, `remove` takes some of the test's own away. Resolves once /healthz answers.
 */
export async function spawnWebDyno(
  t: Teardown,
  dbs: { databaseUrl: string; clickhouseUrl: string },
  extra: Record<string, string> = {},
  remove: string[] = [],
): Promise<{ base: string; proc: Proc }> {
  const port = await freePort();
  const env = childEnv(
    {
      DATABASE_URL: dbs.databaseUrl,
      CLICKHOUSE_URL: dbs.clickhouseUrl,
      PORT: String(port),
      INTERNAL_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY,
      ...extra,
    },
    ['DATA_DIR', ...remove],
  );
  const proc = spawnNode(t, 'dist/runtime/web.js', { env });
  const base = `http://127.0.0.1:${port}`;
  await waitHttp(`${base}/healthz`, proc, 60_000);
  return { base, proc };
}

/** Waits until url answers 2xx; fails early, with the process's output, when proc exits first or the wait ends. */
export async function waitHttp(url: string, proc: Proc, ms = 120_000): Promise<void> {
  const output = () => `\n${proc.stdout()}\n${proc.stderr()}`;
  const answered = await waitFor(
    `${url} to answer`,
    async () => {
      if (proc.exit()) return false;
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        return res.ok || undefined;
      } catch {
        return undefined; // not listening yet
      }
    },
    { ms },
  ).catch((err: Error) => {
    throw new Error(err.message + output());
  });
  if (!answered) throw new Error(`exited ${JSON.stringify(proc.exit())} before ${url} answered${output()}`);
}
