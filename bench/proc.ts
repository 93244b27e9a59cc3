import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * Process and machine accounting from /proc, shared by the benchmarks: what each process of
 * the service used, and how busy the (shared) machine was, so a figure taken while other work
 * ran can be recognised.
 */
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The 1, 5 and 15 minute load averages (/proc/loadavg), printed beside figures on a shared machine. */
export const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

export function round(n: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * A sample of durations in ms as the benches report it: how many, the percentiles asked (p50,
 * p95, ...) and the largest, each to 0.1 ms.
 */
export function latencyStats<const P extends number>(ms: readonly number[], percentiles: readonly P[]): { n: number } & Record<`p${P}`, number> & { max: number } {
  const s = [...ms].sort((a, b) => a - b);
  const ps = Object.fromEntries(percentiles.map((p) => [`p${p}`, round(percentile(s, p), 1)]));
  return { n: s.length, ...ps, max: round(s.at(-1) ?? NaN, 1) } as { n: number } & Record<`p${P}`, number> & { max: number };
}

/** Resident and peak resident memory (VmRSS, VmHWM) in MiB; undefined once the process is gone. */
export function memoryMiB(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: round(kb('VmRSS') / 1024, 1), hwm: round(kb('VmHWM') / 1024, 1) };
  } catch {
    return undefined;
  }
}

/** utime+stime of a process, plus its reaped children's when `withReaped` (seconds); 0 once gone. */
export function cpuSeconds(pid: number, withReaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
    const f = (n: number) => Number(fields[n - 3]);
    return (f(14) + f(15) + (withReaped ? f(16) + f(17) : 0)) / CLK_TCK;
  } catch {
    return 0;
  }
}

export function childrenOf(pid: number): Array<{ pid: number; args: string }> {
  try {
    return execFileSync('ps', ['--ppid', String(pid), '-o', 'pid=,args='], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const [p, ...rest] = l.split(/\s+/);
        return { pid: Number(p), args: rest.join(' ') };
      });
  } catch {
    return [];
  }
}

/** The whole embedded Postgres: postmaster (with its reaped backends) plus live backends. */
export function postgresCpuSeconds(postmaster: number): number {
  return cpuSeconds(postmaster, true) + childrenOf(postmaster).reduce((s, c) => s + cpuSeconds(c.pid), 0);
}

/** Machine-wide jiffies from /proc/stat (user nice system idle iowait irq softirq steal ...). */
export interface Jiffies {
  total: number;
  /** Time the CPUs ran something (user, nice, system, irq, softirq), steal excluded. */
  busy: number;
  softirq: number;
  /** Time the hypervisor gave our vCPUs to someone else. */
  steal: number;
}

export function machineJiffies(): Jiffies {
  const v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const at = (i: number) => v[i] ?? 0;
  // guest and guest_nice (8, 9) are already included in user and nice.
  const total = at(0) + at(1) + at(2) + at(3) + at(4) + at(5) + at(6) + at(7);
  return { total, busy: at(0) + at(1) + at(2) + at(5) + at(6), softirq: at(6), steal: at(7) };
}

/** Cores in use over an interval (busy, softirq, steal), scaled to the machine's core count. */
export function coresBetween(a: Jiffies, b: Jiffies): { busy: number; softirq: number; steal: number } {
  const t = b.total - a.total || 1;
  const n = cpus().length;
  return { busy: ((b.busy - a.busy) / t) * n, softirq: ((b.softirq - a.softirq) / t) * n, steal: ((b.steal - a.steal) / t) * n };
}

/** Busy cores over a short idle interval: is something else loading the machine? */
export async function machineLoad(ms: number): Promise<number> {
  const a = machineJiffies();
  await sleep(ms);
  return round(coresBetween(a, machineJiffies()).busy, 2);
}

/**
 * Times `call` up to `runs` times after up to `warmups` untimed calls (fewer when one takes over a
 * second), stopping once `budgetS` of measured time has passed and `minRuns` are done.
 */
export async function timedRuns<T>(
  runs: number,
  call: () => Promise<T>,
  opts: { warmups: number; minRuns: number; budgetS: number },
): Promise<Array<{ ms: number; value: T }>> {
  for (let i = 0; i < opts.warmups; i++) {
    const t = performance.now();
    await call();
    if (performance.now() - t > 1_000) break;
  }
  const out: Array<{ ms: number; value: T }> = [];
  const start = performance.now();
  while (out.length < runs && (out.length < opts.minRuns || performance.now() - start < opts.budgetS * 1000)) {
    const t = performance.now();
    const value = await call();
    out.push({ ms: performance.now() - t, value });
  }
  return out;
}

/** A positive integer from the environment (a bench option), else the fallback. */
export function intEnv(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return process.env[name] && Number.isInteger(v) && v > 0 ? v : fallback;
}
