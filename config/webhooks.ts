import { fail, integer, type Variable } from './variable.js';

/**
 * The webhook variables (docs/webhooks.md), one `webhooks` entry of the configuration schema
 * (config/schema.ts). Durations read as a number of seconds or with a unit: 30s, 5m, 2h, 5d.
 */
const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
const DURATION = /^(\d+)\s*([smhd]?)$/;

function seconds(raw: string): number | undefined {
  const m = DURATION.exec(raw.trim().toLowerCase());
  if (!m) return undefined;
  const n = Number(m[1]) * (UNITS[m[2] || 's'] ?? 1);
  return Number.isSafeInteger(n) ? n : undefined;
}

function duration(name: string, def: number, defaultText: string, description: string): Variable<number> {
  const allowed = 'a duration of at least 1 s: seconds, or a number with a unit s, m, h or d (e.g. 5d)';
  return {
    name, type: 'duration', default: def, defaultText, allowed, description,
    parse(raw) {
      const n = seconds(raw);
      if (n === undefined || n < 1) fail(name, allowed, raw);
      return n!;
    },
  };
}

/** Svix's schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const SVIX_SCHEDULE = [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000];

const retrySchedule: Variable<number[]> = {
  name: 'WEBHOOK_RETRY_SCHEDULE',
  type: 'duration list',
  default: SVIX_SCHEDULE,
  defaultText: '0,5s,5m,30m,2h,5h,10h,10h',
  allowed: 'a comma-separated list of 1 to 20 durations (seconds, or with a unit s, m, h, d)',
  description:
    'delay before each attempt of an event: the first (normally 0), then one per retry; its length is the number of attempts. A 429 or 503 with Retry-After waits that long instead (docs/webhooks.md)',
  parse(raw) {
    const list = raw.split(',').map((s) => seconds(s));
    if (!list.length || list.length > 20 || list.some((n) => n === undefined)) fail('WEBHOOK_RETRY_SCHEDULE', 'a comma-separated list of 1 to 20 durations (seconds, or with a unit s, m, h, d)', raw);
    return list as number[];
  },
};

export const WEBHOOK_VARIABLES = {
  timeoutSeconds: integer('WEBHOOK_TIMEOUT_SECONDS', 15, { min: 1, max: 300 }, 'seconds a receiver has to answer a delivery; past them the attempt fails with no status code'),
  retrySchedule,
  pauseAfterSeconds: duration('WEBHOOK_PAUSE_AFTER', 5 * 86_400, '5d', 'a webhook whose deliveries have all failed for longer than this (since failing_since) is paused (is_active false, auto_paused_at)'),
  pauseAfterFailures: integer('WEBHOOK_PAUSE_AFTER_FAILURES', 0, { min: 0, max: 1_000_000 }, 'a webhook whose last N attempts all failed (consecutive_failures) is paused at once; 0: only WEBHOOK_PAUSE_AFTER pauses'),
  maxPerInstance: integer(
    'WEBHOOK_MAX_PER_INSTANCE', 20, { min: 1, max: 1000 },
    "webhooks one instance may have (paused ones count: they can be resumed); creating one more answers 409 webhook_limit_reached. Each webhook multiplies every event of the instance, so this bounds one send's fan-out (docs/webhooks.md)",
  ),
  concurrency: integer('WEBHOOK_CONCURRENCY', 10, { min: 1, max: 1000 }, 'attempts in flight to one webhook at a time, across all workers'),
  holdMax: integer('WEBHOOK_HOLD_MAX', 100_000, { min: 10, max: 10_000_000 }, 'deliveries a worker keeps in memory per webhook while its WEBHOOK_CONCURRENCY attempts are in flight (about 50 bytes each); the rest wait in the table and are read back as these drain'),
  allowPrivate: {
    name: 'WEBHOOK_ALLOW_PRIVATE',
    type: 'enum',
    default: false,
    allowed: 'true or false',
    description: "true: receivers on loopback, private and link-local addresses are allowed (set it explicitly, e.g. for a receiver on this machine or a test); false: refused at creation and at every delivery. Either way the service's own listeners are never a receiver (docs/webhooks.md)",
    parse(raw) {
      const v = raw.trim().toLowerCase();
      if (v !== 'true' && v !== 'false') fail('WEBHOOK_ALLOW_PRIVATE', 'true or false', raw);
      return v === 'true';
    },
  } satisfies Variable<boolean>,
  retentionDays: integer('WEBHOOK_RETENTION_DAYS', 7, { min: 2, max: 365 }, 'days events, deliveries and attempts are kept for the log and for replay (pending deliveries are kept until they settle)'),
  clockOffsetSeconds: integer('WEBHOOK_CLOCK_OFFSET_SECONDS', 0, { min: 0, max: 3_153_600_000 }, "seconds added to the worker's clock when it decides which signing secrets are still in force; tests and drills only (docs/webhooks.md)"),
};
