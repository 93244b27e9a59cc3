import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../config/paths.js';
import { freePort } from '../config/ports.js';
import { readServices } from '../config/services-file.js';
import { createPool, type Pool } from '../sql/pool.js';
import { childrenOf, coresBetween, cpuSeconds, machineJiffies, machineLoad, postgresCpuSeconds, round, sleep, type Jiffies } from './proc.js';

/**
 * The service as a user starts it, for the benchmarks: `node dist/runtime/start.js` (embedded
 * Postgres, ClickHouse, the mailbox simulator, web and worker) on a fresh or given DATA_DIR and
 * a free port, in its own process group so stopping it is what Ctrl-C does.
 */
export interface Service {
  child: ChildProcess;
  url: string;
  port: number;
  dataDir: string;
  webPid: number;
  workerPid: number;
  /** The embedded postmaster (0 if not found). */
  postgresPid: number;
  stderr: () => string;
}

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

/**
 * Busy cores over 3 s before a benchmark starts, reported with the results. On a shared machine
 * BENCH_WAIT_IDLE=SECONDS first waits (up to that long) for other work to stop; a warning says
 * when something else still loads the machine (the figures will be low).
 */
export async function loadBeforeStart(): Promise<number> {
  let load = await machineLoad(3_000);
  for (const until = Date.now() + Number(process.env.BENCH_WAIT_IDLE ?? 0) * 1000; load > 0.3 && Date.now() < until; ) {
    log(`machine busy (${load} cores); waiting for it to be idle`);
    load = await machineLoad(5_000);
  }
  if (load > 0.2) log(`warning: the machine is already busy (${load} cores) before the benchmark starts; figures will be low`);
  return load;
}

/** The machine a benchmark ran on, for its JSON report; `note` says what shares its cores. */
export function machineInfo(note: string): { nproc: number; cpu_model: string; node: string; note: string } {
  return { nproc: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, note };
}

/** A pool on the service's embedded Postgres, found in its services.json. */
export function servicePool(service: Service, max: number): Pool {
  const url = readServices(service.dataDir).postgres?.url;
  if (!url) throw new Error(`no embedded Postgres recorded in ${service.dataDir}/services.json`);
  return createPool(url, { max, application: 'cartero-bench' });
}

/** A process's Postgres round trips and pool checkouts so far, by statement (bench/pg-query-counter.ts). */
export interface QueryCounts {
  total: number;
  checkouts: number;
  by_statement: Record<string, number>;
}

/**
 * Asks one process of the service (started with benchPreloads countQueries) for its counts: SIGUSR2
 * makes the preloaded counter write them to $DATA_DIR/pg-queries.<pid>.json, read once it is there.
 */
export async function readQueryCounts(service: Service, pid: number): Promise<QueryCounts> {
  const file = join(service.dataDir, `pg-queries.${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(20);
  await sleep(20);
  return JSON.parse(readFileSync(file, 'utf8')) as QueryCounts;
}

/** Every bench runs the built service (dist/runtime/start.js): say so at once when it is not built. */
export function assertBuilt(): void {
  if (!existsSync(join(projectRoot, 'dist', 'runtime', 'start.js'))) throw new Error('dist/ is missing: run npx tsc -p tsconfig.json first');
}

/** `--import` flags for the service's processes: profiler and query counter when asked for. */
export function benchPreloads(opts: { cpuProfile: boolean; countQueries: boolean }): string[] {
  const preload = (file: string) => `--import=${pathToFileURL(join(projectRoot, 'dist', 'bench', file)).href}`;
  return [...(opts.cpuProfile ? [preload('cpu-profiler.js')] : []), ...(opts.countQueries ? [preload('pg-query-counter.js')] : [])];
}

export async function startService(opts: { dataDir?: string; prefix: string; nodeOptions?: string[]; env?: NodeJS.ProcessEnv }): Promise<Service> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), opts.prefix));
  // mkdtemp makes a 0700 directory; the embedded Postgres runs as another user and must traverse
  // it (sql/embedded.ts would fall back to /var/lib/cartero, which the benchmark would not clean).
  chmodSync(dataDir, 0o755);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
  // The embedded default, whatever the calling shell has set.
  delete env.DATABASE_URL;
  delete env.CLICKHOUSE_URL;
  delete env.SMTP_URL;
  const nodeOptions = [env.NODE_OPTIONS ?? '', ...(opts.nodeOptions ?? [])].join(' ').trim();
  if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
  else delete env.NODE_OPTIONS;

  const child = spawn(process.execPath, [join(projectRoot, 'dist', 'runtime', 'start.js')], {
    cwd: projectRoot,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-20_000)));
  const started = Date.now();
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`service not running after 180 s\nstdout:\n${out}\nstderr:\n${err}`)), 180_000);
      const onData = () => {
        if (/running at/.test(out)) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          child.off('exit', onExit);
          resolve();
        }
      };
      const onExit = (code: number | null, signal: string | null) => {
        clearTimeout(timer);
        reject(new Error(`service exited during start (code ${code}, signal ${signal})\nstdout:\n${out}\nstderr:\n${err}`));
      };
      child.stdout!.on('data', onData);
      child.once('exit', onExit);
    });
  } catch (e) {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  log(`service running after ${((Date.now() - started) / 1000).toFixed(1)} s (DATA_DIR ${dataDir})`);
  const kids = childrenOf(child.pid!);
  const web = kids.find((c) => c.args.includes(join('dist', 'runtime', 'web.js')));
  const worker = kids.find((c) => c.args.includes(join('dist', 'runtime', 'worker.js')));
  const pm = join(dataDir, 'postgres', 'data', 'postmaster.pid');
  const postgresPid = existsSync(pm) ? Number(readFileSync(pm, 'utf8').split('\n')[0]) : 0;
  const service: Service = {
    child,
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    webPid: web?.pid ?? 0,
    workerPid: worker?.pid ?? 0,
    postgresPid,
    stderr: () => err,
  };
  if (!web || !worker) {
    await stopService(service);
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`web or worker not found among the children of ${child.pid}: ${JSON.stringify(kids)}`);
  }
  return service;
}

/** SIGINT to the service's process group (Ctrl-C), SIGKILL after 60 s; its exit and how long it took. */
export async function stopService(service: Service): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const started = Date.now();
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode, ms: 0 };
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  process.kill(-child.pid!, 'SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 60_000)))]);
  clearTimeout(timer);
  if (!result) {
    log('service did not stop within 60 s after SIGINT; sending SIGKILL to its process group');
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    return { ...(await exited), ms: Date.now() - started };
  }
  return { ...result, ms: Date.now() - started };
}

export type Stopped = Awaited<ReturnType<typeof stopService>>;

/** A stop that was not clean fails the bench, with the service's last words. */
export function checkStopped(service: Service, stopped: Stopped): void {
  if (stopped.code === 0) return;
  log(`service exited with ${stopped.code ?? stopped.signal}; its stderr:\n${service.stderr().slice(-3000)}`);
  process.exitCode = 1;
}

/**
 * The end of every bench, whatever happened: close its clients, stop the service if the bench did
 * not, and remove the temp DATA_DIR (kept with BENCH_KEEP_DATA=1).
 */
export async function cleanUp(service: Service, stopped: Stopped | undefined, close: Array<() => Promise<unknown> | undefined>): Promise<void> {
  for (const c of close) await c()?.catch(() => {});
  if (!stopped) await stopService(service).catch(() => {});
  if (process.env.BENCH_KEEP_DATA === '1') log(`DATA_DIR kept: ${service.dataDir}`);
  else rmSync(service.dataDir, { recursive: true, force: true });
}

/** A stop as a bench reports it: the exit, how long it took, and whether it was clean (exit 0). */
export type StopReport = Stopped & { clean: boolean };

/**
 * The frame of a bench against its own service: `bench` gets a pool of `poolMax` connections to
 * the service's Postgres, and `stop`, which closes that pool and stops the service as Ctrl-C does
 * (a clean stop is part of what every bench checks: an unclean one fails it, with the service's
 * last words). Whatever happens, the service is stopped and its DATA_DIR removed (cleanUp).
 */
export async function benchService(service: Service, poolMax: number, bench: (pool: Pool, stop: () => Promise<StopReport>) => Promise<void>): Promise<void> {
  let pool: Pool | undefined;
  let stopped: Stopped | undefined;
  const stop = async (): Promise<StopReport> => {
    await pool?.end();
    pool = undefined;
    stopped = await stopService(service);
    return { ...stopped, clean: stopped.code === 0 };
  };
  try {
    pool = servicePool(service, poolMax);
    await bench(pool, stop);
    if (stopped) checkStopped(service, stopped);
  } finally {
    await cleanUp(service, stopped, [() => pool?.end()]);
  }
}

/** Run a bench's main; an uncaught failure prints and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

/** CPU seconds used so far by each part of the service and by this process, at one instant. */
export interface CpuSnapshot {
  web: number;
  worker: number;
  /** The postmaster with its reaped and live backends. */
  postgres: number;
  clickhouse: number;
  /** The supervisor (runtime/start.js), which also runs the mailbox simulator. */
  supervisor: number;
  /** This process: the load generator (autocannon, the HTTP client, the bare loop). */
  bench: number;
  machine: Jiffies;
  /**
   * CPU seconds of each dyno (`web.1`, `worker.2`: services.json's `dynos`) and of each embedded
   * ClickHouse shard (`clickhouse.1`: its `clickhouse_shards`), when the service runs several:
   * how the work splits between them (bench/scale.ts). Empty with one web, one worker, one server.
   */
  parts: Record<string, number>;
  /** performance.now() of the snapshot. */
  at: number;
}

/** The dynos and shards services.json lists, by name, when there is more than one of a kind. */
function partPids(s: Service): Record<string, number> {
  // Written by runtime/start.ts: dynos since issue 26, clickhouse_shards with CLICKHOUSE_SHARDS.
  const services = readServices(s.dataDir) as { dynos?: Array<{ name: string; pid: number }>; clickhouse_shards?: Array<{ pid?: number }> };
  const parts: Record<string, number> = {};
  const dynos = services.dynos ?? [];
  for (const kind of ['web', 'worker']) {
    const ofKind = dynos.filter((d) => d.name.startsWith(`${kind}.`));
    if (ofKind.length > 1) for (const d of ofKind) parts[d.name] = d.pid;
  }
  const shards = services.clickhouse_shards ?? [];
  if (shards.length > 1) shards.forEach((sh, i) => sh.pid && (parts[`clickhouse.${i + 1}`] = sh.pid));
  return parts;
}

/** CPU seconds of each part (CpuSnapshot.parts) between two snapshots. */
export function partsBetween(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  return Object.fromEntries(Object.keys(b.parts).map((k) => [k, round((b.parts[k] ?? 0) - (a.parts[k] ?? 0), 2)]));
}

/** The parts of a CpuSnapshot whose CPU seconds are counted one by one. */
export type CpuPart = 'web' | 'worker' | 'postgres' | 'clickhouse' | 'supervisor' | 'bench';
const CPU_PARTS: readonly CpuPart[] = ['web', 'worker', 'postgres', 'clickhouse', 'supervisor', 'bench'];

/**
 * Where the cores went between two snapshots, as the benches that drive the whole service
 * account for them: each part's cores (its CPU seconds over the wall seconds between the
 * snapshots, unrounded), `ours` their sum, and the machine's busy cores. Each bench then reports
 * the parts it names (roundedCores) and the busy cores charged to none of them.
 */
export function coresByPart(a: CpuSnapshot, b: CpuSnapshot): Record<CpuPart, number> & { ours: number; machine: ReturnType<typeof coresBetween> } {
  const wall = (b.at - a.at) / 1000;
  const cores = Object.fromEntries(CPU_PARTS.map((k) => [k, (b[k] - a[k]) / wall])) as Record<CpuPart, number>;
  return { ...cores, ours: CPU_PARTS.reduce((sum, k) => sum + cores[k], 0), machine: coresBetween(a.machine, b.machine) };
}

/** The parts named, in that order, each to 0.01 core. */
export function roundedCores<K extends CpuPart>(cores: Record<CpuPart, number>, parts: readonly K[]): Record<K, number> {
  return Object.fromEntries(parts.map((k) => [k, round(cores[k], 2)])) as Record<K, number>;
}

/** One snapshot for every benchmark; each divides the difference of two by the wall time. */
export function cpuSnapshot(s: Service): CpuSnapshot {
  const bench = process.cpuUsage();
  const pids = partPids(s);
  const parts = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const sumOf = (kind: string, single: number) => {
    const names = Object.keys(parts).filter((n) => n.startsWith(`${kind}.`));
    return names.length > 0 ? names.reduce((sum, n) => sum + parts[n]!, 0) : cpuSeconds(single);
  };
  return {
    web: sumOf('web', s.webPid),
    worker: sumOf('worker', s.workerPid),
    postgres: s.postgresPid ? postgresCpuSeconds(s.postgresPid) : 0,
    clickhouse: childrenOf(s.child.pid!)
      .filter((c) => /clickhouse|chlauncher/.test(c.args))
      .reduce((sum, c) => sum + cpuSeconds(c.pid), 0),
    supervisor: cpuSeconds(s.child.pid!),
    bench: (bench.user + bench.system) / 1e6,
    machine: machineJiffies(),
    parts,
    at: performance.now(),
  };
}
