import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';

/**
 * A queue consumer that completes each job when its own work ends, not when its batch's does.
 * pg-boss's `work` completes a fetched batch together, so the batch, and the fetch loop waiting
 * on it, last as long as the slowest job in it: for webhook deliveries, one receiver answering
 * only at the timeout held back every other webhook's deliveries fetched with it. Here the loop
 * fetches again as soon as the jobs in hand drop below `maxActive`, and completions (and
 * failures) are written in batches, one statement per flush.
 */
export interface JobConsumer {
  /** Fetch now: jobs were just enqueued (instead of waiting for the next poll). */
  wake(): void;
  /**
   * Stops fetching, runs `fetched` (nothing more will be dispatched), then waits up to `graceMs`
   * for the jobs in hand and writes their outcomes; jobs still running then are failed (pg-boss
   * retries them by the queue's policy).
   */
  stop(graceMs: number, fetched?: () => Promise<void>): Promise<void>;
}

/**
 * How long a stop waits for the jobs in hand. The worker's whole stop has 20 s
 * (runtime/shutdown.ts): these consumers first, then pg-boss's own workers (up to 15 s).
 */
export const CONSUMER_STOP_GRACE_MS = 4_000;

export interface ConsumerOptions {
  batchSize: number;
  /** Jobs fetched and not yet done, at most: the back-pressure on the queue (with `weigh`, their weight: an aim, see there). */
  maxActive: number;
  /**
   * What a job counts for against maxActive (the send queue: its mails). A fetch asks for as many
   * jobs as the room left holds at the last fetch's mean weight (`firstWeight` before any), so
   * jobs of 100 mails are fetched a few at a time and jobs of one mail a batch at a time. A job's
   * weight is known only once fetched, so a fetch of jobs heavier than the last ones overshoots
   * maxActive (no fetch while nothing is left of it); a strict bound is the caller's
   * (workers/machinery/weighted-slots.ts, as the send worker does).
   */
  weigh?: (job: PgBoss.Job<unknown>) => number;
  firstWeight?: number;
  pollMs: number;
  logger: Logger;
}

/**
 * `dispatch` gets each fetched batch and returns one promise per job, in order: resolved, the
 * job is completed; rejected, failed (pg-boss retries it by the queue's policy). A throw of
 * dispatch itself fails the whole batch.
 */
export function consumeJobs(
  boss: PgBoss,
  name: string,
  opts: ConsumerOptions,
  dispatch: (jobs: PgBoss.Job<unknown>[]) => Promise<Array<Promise<void>>>,
): JobConsumer {
  // The jobs fetched and not yet done, with their weights.
  const inHand = new Map<string, number>();
  let active = 0;
  const weigh = opts.weigh ?? (() => 1);
  let perJob = opts.firstWeight ?? 1;
  let stopping = false;
  let nudge: (() => void) | undefined;
  const nudged = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => ((nudge = undefined), resolve()), ms);
      nudge = () => {
        clearTimeout(timer);
        nudge = undefined;
        resolve();
      };
    });
  const poke = () => nudge?.();
  // What the loop waits for: room (a job done frees it: fetch at once) or jobs (the queue was
  // empty: a job done elsewhere says nothing of new ones, so the poll keeps its own cadence and a
  // lone job written just after a completion waits pollMs / 2 on average, not a whole pollMs).
  let waitingFor: 'room' | 'jobs' | undefined;
  const roomFreed = () => {
    if (waitingFor !== 'jobs') poke();
  };

  const completed: string[] = [];
  const failed = new Map<string, string[]>();
  // pg-boss fails several ids with one reason (its manager maps an array), though its types list the reason only beside one id.
  const failJobs = boss.fail.bind(boss) as (name: string, ids: string[], data: object) => Promise<unknown>;
  let flushing: Promise<void> | undefined;
  const flush = async (): Promise<void> => {
    while (completed.length || failed.size) {
      const done = completed.splice(0);
      const fails = [...failed];
      failed.clear();
      try {
        if (done.length) await boss.complete(name, done);
        // One statement per reason: a batch that failed as a whole (the send queue's) is one.
        for (const [message, ids] of fails) await failJobs(name, ids, { message });
      } catch (err) {
        // Unwritten, the jobs expire and are retried: a duplicate job is harmless for the queues
        // that use this consumer.
        opts.logger.warn({ err, completed: done.length, failed: fails.length }, 'could not record job outcomes; they will expire and be retried');
      }
    }
  };
  const settle = (id: string, error?: unknown) => {
    // Already failed by the stop: its outcome is not this process's to write any more.
    const weight = inHand.get(id);
    if (weight === undefined) return;
    inHand.delete(id);
    active -= weight;
    if (error === undefined) completed.push(id);
    else {
      const message = error instanceof Error ? error.message : String(error);
      (failed.get(message) ?? failed.set(message, []).get(message)!).push(id);
    }
    roomFreed();
    scheduleFlush();
  };
  // Outcomes settled in the same turn share a statement; those settled during a flush, the next.
  function scheduleFlush(): void {
    flushing ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(flush)
      .finally(() => {
        flushing = undefined;
        if (completed.length || failed.size) scheduleFlush();
      });
  }

  const loop = (async () => {
    while (!stopping) {
      const room = opts.maxActive - active;
      if (room <= 0) {
        waitingFor = 'room';
        await nudged(opts.pollMs);
        waitingFor = undefined;
        continue;
      }
      let jobs: PgBoss.Job<unknown>[];
      try {
        jobs = await boss.fetch<unknown>(name, { batchSize: Math.max(1, Math.min(opts.batchSize, Math.floor(room / perJob))) });
      } catch (err) {
        if (!stopping) opts.logger.warn({ err, queue: name }, 'could not fetch jobs; trying again');
        await nudged(opts.pollMs);
        continue;
      }
      if (!jobs.length) {
        waitingFor = 'jobs';
        await nudged(opts.pollMs);
        waitingFor = undefined;
        continue;
      }
      let fetchedWeight = 0;
      for (const job of jobs) {
        const weight = Math.max(1, weigh(job));
        inHand.set(job.id, weight);
        active += weight;
        fetchedWeight += weight;
      }
      perJob = fetchedWeight / jobs.length;
      let outcomes: Array<Promise<void>>;
      try {
        outcomes = await dispatch(jobs);
      } catch (err) {
        outcomes = jobs.map(() => Promise.reject(err));
      }
      jobs.forEach((job, i) => outcomes[i]!.then(() => settle(job.id), (err: unknown) => settle(job.id, err ?? 'failed')));
    }
  })();

  return {
    wake: poke,
    async stop(graceMs, fetched) {
      stopping = true;
      poke();
      await loop;
      await fetched?.();
      const until = Date.now() + graceMs;
      while (inHand.size && Date.now() < until) await nudged(Math.min(100, until - Date.now()));
      // What is still running is failed now, as pg-boss's own stop does with its workers' jobs:
      // retried by its policy at once rather than after its expiry.
      for (const id of [...inHand.keys()]) settle(id, new Error('the worker stopped while the job ran'));
      await flushing;
      await flush();
    },
  };
}
