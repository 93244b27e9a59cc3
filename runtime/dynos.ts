import cluster, { type Worker } from 'node:cluster';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { projectRoot } from '../config/paths.js';

/** A dyno as services.json lists it: Heroku's name (`web.1`) and its pid, null while it waits to be restarted. */
export interface DynoEntry {
  name: string;
  pid: number | null;
}

export interface Backoff {
  /** Delay before the first restart after a dyno dies. */
  firstMs: number;
  /** Each further restart in a row doubles the delay, up to this. */
  capMs: number;
  /** A dyno that stayed up this long before dying starts again from firstMs. */
  stableMs: number;
}

// Heroku restarts a crashed dyno at once, then with growing delays; systemd and pm2 do alike.
// One second doubling to half a minute keeps a dyno that cannot start (a database migrated by
// newer code, a port taken) from spinning, and a dyno that ran a minute is back in a second.
export const DEFAULT_BACKOFF: Backoff = { firstMs: 1_000, capMs: 30_000, stableMs: 60_000 };

/** The delay before restart number `streak` (1 = the first after a stable run). */
export function restartDelay(streak: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  return Math.min(backoff.capMs, backoff.firstMs * 2 ** Math.max(0, streak - 1));
}

/** Restarts in a row after a death that follows a run of upMs: a stable run starts the count again. */
export function nextStreak(streak: number, upMs: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  return (upMs >= backoff.stableMs ? 0 : streak) + 1;
}

export interface DynoSupervisor {
  /** Every dyno, in start order (web.1..N, then worker.1..N). */
  list(): DynoEntry[];
  /** No restart from now on; SIGTERM to every running dyno; resolves once all have exited. */
  stop(): Promise<void>;
}

interface Slot {
  name: string;
  script: string;
  worker: Worker | undefined;
  startedAt: number;
  /** Restarts in a row, each after a run shorter than backoff.stableMs. */
  streak: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * `npm start`'s dynos, as a process manager runs them: this process becomes the primary of a
 * Node cluster and forks each dyno from its Procfile entry point (dist/runtime/web.js,
 * worker.js), so every web dyno listens on the one PORT and INTERNAL_PORT, and every worker on
 * the one INBOUND_SMTP_PORT: the primary opens each listening socket once and every dyno that
 * listens there accepts from it (SCHED_NONE below), with no proxy of ours in between.
 * A dyno that exits while the supervisor is not stopping is forked again after a delay that
 * doubles with each restart in a row (restartDelay), each restart logged with the name, the
 * exit code or signal and the delay. A cluster worker exits when its primary goes away (the IPC
 * channel closes), so a supervisor killed hard leaves no dyno behind.
 */
export function superviseDynos(opts: {
  counts: { web: number; worker: number };
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Called whenever a pid changes (a fork, an exit): services.json is rewritten from it. */
  onChange(dynos: DynoEntry[]): void;
  backoff?: Backoff;
}): DynoSupervisor {
  const backoff = opts.backoff ?? DEFAULT_BACKOFF;
  const { logger } = opts;
  let stopping = false;
  const slots: Slot[] = (['web', 'worker'] as const).flatMap((kind) =>
    Array.from({ length: opts.counts[kind] }, (_, i) => ({
      name: `${kind}.${i + 1}`,
      script: join(projectRoot, 'dist', 'runtime', `${kind}.js`),
      worker: undefined,
      startedAt: 0,
      streak: 0,
      timer: undefined,
    })),
  );
  const list = (): DynoEntry[] => slots.map((s) => ({ name: s.name, pid: s.worker?.process.pid ?? null }));
  const exits = new Map<Slot, Promise<void>>();

  const fork = (slot: Slot) => {
    slot.timer = undefined;
    if (stopping) return;
    // setupPrimary's settings apply to the next fork only: each dyno gets its own entry point.
    // stdin is not the dynos' (a terminal's Ctrl-C reaches them as a signal to the group).
    cluster.setupPrimary({ exec: slot.script, args: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    // DYNO: the dyno's name in its environment, as Heroku sets it.
    const worker = cluster.fork({ ...opts.env, DYNO: slot.name });
    slot.worker = worker;
    slot.startedAt = Date.now();
    // An IPC write to a dyno that just died: its exit follows and is what counts.
    worker.on('error', (err) => logger.debug({ err, process: slot.name }, 'dyno IPC error'));
    exits.set(
      slot,
      new Promise<void>((resolve) =>
        worker.once('exit', (code, signal) => {
          const pid = worker.process.pid;
          slot.worker = undefined;
          resolve();
          if (stopping) return;
          const upMs = Date.now() - slot.startedAt;
          slot.streak = nextStreak(slot.streak, upMs, backoff);
          const delay = restartDelay(slot.streak, backoff);
          const how = signal ? `signal ${signal}` : `code ${code}`;
          logger.error(
            { process: slot.name, dyno_pid: pid, code, signal, up_ms: upMs, restart_in_ms: delay, restarts_in_a_row: slot.streak },
            `${slot.name} (pid ${pid}) exited with ${how}; restarting in ${delay} ms`,
          );
          opts.onChange(list());
          slot.timer = setTimeout(() => {
            fork(slot);
            if (slot.worker) logger.info({ process: slot.name, dyno_pid: slot.worker.process.pid }, `${slot.name} restarted (pid ${slot.worker.process.pid})`);
          }, delay);
        }),
      ),
    );
    opts.onChange(list());
  };

  // The kernel's accept queue, shared by the dynos, rather than Node's default round robin on
  // Linux (the primary accepts and passes each connection to a dyno over IPC): a connection
  // passed to a dyno in the moment it dies is never answered nor closed there (seen here with a
  // SIGKILLed web dyno under load: the client waits forever), while a shared socket leaves
  // whatever the dead dyno had not accepted to the others. It also keeps the primary out of
  // every connection. Set before the first fork, which freezes it.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  for (const slot of slots) fork(slot);
  logger.debug({ dynos: list() }, 'dynos forked');

  return {
    list,
    async stop() {
      stopping = true;
      for (const slot of slots) clearTimeout(slot.timer);
      await Promise.all(
        slots.map((slot) => {
          if (!slot.worker) return undefined;
          // The dyno's own graceful stop (runtime/shutdown.ts), not cluster's disconnect: in-flight
          // requests are answered and running jobs finish.
          slot.worker.process.kill('SIGTERM');
          return exits.get(slot);
        }),
      );
    },
  };
}
