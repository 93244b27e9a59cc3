import type { Logger } from 'pino';
import type { ClickHouseClient } from '../../analytics/client.js';
import { countsBy } from '../../analytics/deliverability/counts.js';
import {
  instancesWithMailToday, nextAlert, readingsOf, recordAlerts, seriesId, seriesStates, type ActiveInstance, type Alert,
} from '../../domain/deliverability/alerts.js';
import { dashboardRange } from '../../domain/panel/dashboard-range.js';
import { isProviderId } from '../../engines/providers/table.js';
import type { Pool } from '../../sql/pool.js';
import { defineSchedule } from '../machinery/job.js';

/**
 * Every minute: each instance's current local day, per mailbox provider and sending domain,
 * against the bulk-sender thresholds (docs/deliverability.md, "Alerts"): a status that worsens is
 * a deliverability.threshold_crossed webhook event, one that comes back down a
 * deliverability.threshold_recovered (domain/deliverability/alerts.ts decides and claims them).
 * Only the instances that received mail today are read; the figures are the ones
 * GET /v1/deliverability/providers gives for today with domain=<the sending domain>.
 */
export interface AlertDeps {
  pool: Pool;
  clickhouse: ClickHouseClient;
  /** DELIVERABILITY_ALERT_MIN_DELIVERED. */
  minDelivered: number;
  logger?: Logger;
}

export interface AlertRun {
  /** Instances read (those with mail today). */
  instances: number;
  /** Events appended to the outbox. */
  emitted: number;
  /** Instances whose evaluation failed (ClickHouse not answering...): tried again next minute. */
  failed: number;
}

// Instances read side by side: each is two ClickHouse queries, mostly waiting.
const PARALLEL = 4;

/** One instance's day: its counts, the alerts they call for, claimed. Returns the events appended. */
async function evaluateInstance(deps: AlertDeps, { tenant, day }: ActiveInstance): Promise<number> {
  const range = dashboardRange({ start_date: day, end_date: day }, tenant.tz);
  const counts = await countsBy(tenant, deps.clickhouse, range, {}, ['provider', 'domain']);
  const readings = counts.flatMap((c) => {
    const provider = c.provider ?? '';
    // A value no release wrote (a hand-made row in ClickHouse) is left out, as the figures do.
    return isProviderId(provider) && c.domain ? readingsOf(provider, c.domain, c, deps.minDelivered) : [];
  });
  if (!readings.length) return 0;
  const states = await seriesStates(deps.pool, tenant, day);
  const alerts = readings.map((r) => nextAlert(states.get(seriesId(r)), r)).filter((a): a is Alert => a !== undefined);
  return (await recordAlerts(deps.pool, tenant, day, alerts)).length;
}

/** One evaluation of every instance with mail today, at `now` (the job's minute). */
export async function evaluateDeliverabilityAlerts(deps: AlertDeps, now = new Date()): Promise<AlertRun> {
  const active = await instancesWithMailToday(deps.pool, now);
  const run: AlertRun = { instances: active.length, emitted: 0, failed: 0 };
  let firstError: unknown;
  for (let i = 0; i < active.length; i += PARALLEL) {
    const outcomes = await Promise.allSettled(active.slice(i, i + PARALLEL).map((a) => evaluateInstance(deps, a)));
    for (const o of outcomes) {
      if (o.status === 'fulfilled') run.emitted += o.value;
      else {
        run.failed++;
        firstError ??= o.reason;
      }
    }
  }
  // One line for all of them: when ClickHouse is down every instance fails alike.
  if (run.failed) deps.logger?.warn({ ...run, err: (firstError as Error)?.message }, 'deliverability alerts: some instances not evaluated; next minute tries again');
  return run;
}

export const deliverabilityAlertsJob = defineSchedule({
  name: 'deliverability.alerts',
  schedule: '* * * * *',
  async handle({ pool, clickhouse, config, logger }) {
    const run = await evaluateDeliverabilityAlerts({ pool, clickhouse, minDelivered: config.deliverability.alertMinDelivered, logger });
    if (run.emitted) logger.info(run, 'deliverability alerts emitted');
  },
});
