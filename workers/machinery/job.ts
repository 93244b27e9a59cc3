import type PgBoss from 'pg-boss';
import type { SendSettings } from '../../config/config.js';
import { workInBatches } from './batched-work.js';
import type { JobContext, Stop } from './job-context.js';

// Defined in their own file so that batched-work.ts, which job.ts calls, can take them without
// importing job.ts back (a file cycle); re-exported here for the jobs, which import job.ts only.
export type { JobContext, Stop } from './job-context.js';

/**
 * A pg-boss queue's policy, applied by the release step when it creates or updates the queue
 * (workers/machinery/queue.ts), so web dynos can enqueue in their own transactions without DDL.
 */
export interface QueuePolicy {
  policy?: 'standard' | 'short' | 'singleton' | 'stately';
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
}

/** The configuration queue policies may read (the release step has it as runMigrations' `send`). */
export interface QueueSettings {
  send: Pick<SendSettings, 'retryLimit' | 'retryDelaySeconds' | 'jobExpireSeconds'>;
}

interface JobBase<T> {
  /** The pg-boss queue name: stored in every existing database, so never renamed. */
  name: string;
  policy: QueuePolicy | ((settings: QueueSettings) => QueuePolicy);
  /** A pg-boss cron schedule (one job per tick across all workers). */
  schedule?: string;
  /** Also send one job when a worker starts (besides the schedule). */
  runAtStart?: boolean;
  /**
   * The payload as the handler may trust it, or undefined when it is malformed: such a job is
   * completed with an error in the log, since a retry cannot fix its payload.
   */
  parse(payload: unknown): T | undefined;
}

/** Most jobs: one parsed payload at a time, pg-boss's default fetching. A throw fails the job (pg-boss retries it by its policy). */
export interface HandledJob<T> extends JobBase<T> {
  handle(data: T, ctx: JobContext): Promise<void>;
  /**
   * Up to this many jobs in hand, handled side by side, each completed on its own
   * (workers/machinery/batched-work.ts). For a job a busy instance queues by the hundred (mails of forms and
   * double opt-in) where pg-boss's default, one job per 2 s poll, fell far behind. Handlers must
   * be idempotent, as for any pg-boss job: a failure or a stop retries the job.
   */
  batch?: number;
}

/**
 * A job that registers its own consumer (weighed batches, its own completion): the send job, webhook
 * deliveries. It may return its stop, which the worker runs before stopping the queue.
 */
export interface WorkedJob<T> extends JobBase<T> {
  work(boss: PgBoss, ctx: JobContext): Promise<void | Stop>;
}

export type JobDefinition<T = unknown> = HandledJob<T> | WorkedJob<T>;

/** Only types the definition (its payload type flows from parse to handle). */
export function defineJob<T>(def: HandledJob<T>): HandledJob<T>;
export function defineJob<T>(def: WorkedJob<T>): WorkedJob<T>;
export function defineJob<T>(def: JobDefinition<T>): JobDefinition<T> {
  return def;
}

/** parse for jobs that carry nothing (schedules, triggers): pg-boss gives them null or {}. */
export function noPayload(payload: unknown): Record<string, never> | undefined {
  if (payload === null || payload === undefined) return {};
  return typeof payload === 'object' && !Array.isArray(payload) ? {} : undefined;
}

/**
 * A scheduled job: no payload, and a singleton queue, so one run per tick across all workers
 * (a tick that finds a run still queued adds none). The handler gets the worker's context only.
 */
export function defineSchedule(def: {
  name: string;
  schedule: string;
  runAtStart?: boolean;
  handle(ctx: JobContext): Promise<void>;
}): HandledJob<Record<string, never>> {
  return {
    name: def.name,
    policy: { policy: 'singleton' },
    schedule: def.schedule,
    runAtStart: def.runAtStart,
    parse: noPayload,
    handle: (_data, ctx) => def.handle(ctx),
  };
}

export function queuePolicy(def: JobDefinition<unknown>, settings: QueueSettings): QueuePolicy {
  return typeof def.policy === 'function' ? def.policy(settings) : def.policy;
}

/** Register one job's consumer, schedule and start-up run in a worker; its stop, when it has one. */
export async function registerJob(boss: PgBoss, def: JobDefinition<unknown>, ctx: JobContext): Promise<Stop | undefined> {
  let stop: Stop | undefined;
  if ('work' in def) {
    stop = (await def.work(boss, ctx)) ?? undefined;
  } else if (def.batch) {
    stop = workInBatches(boss, def.name, def.batch, def.parse, def.handle, ctx);
  } else {
    const logger = ctx.logger.child({ queue: def.name });
    const jobCtx = { ...ctx, logger };
    await boss.work<unknown>(def.name, async (jobs) => {
      for (const job of jobs) {
        const data = def.parse(job.data);
        if (data === undefined) {
          logger.error({ jobId: job.id, data: job.data }, 'malformed job ignored');
          continue;
        }
        await def.handle(data, jobCtx);
      }
    });
  }
  if (def.schedule) await boss.schedule(def.name, def.schedule);
  if (def.runAtStart) await boss.send(def.name, {});
  return stop;
}
