import { DateTime } from 'luxon';
import { complaintStatus, ratesOf, severity, statusOf, THRESHOLDS, type Metric, type RateCounts, type RateStatus } from '../../engines/providers/thresholds.js';
import type { ProviderId } from '../../engines/providers/table.js';
import { withTransaction, type Pool } from '../../sql/pool.js';
import { append } from '../outbox/append.js';
import type { Tenant } from '../tenancy/context.js';

/**
 * The deliverability alerts' rules and their Postgres side (docs/deliverability.md, "Alerts";
 * table deliverability_alerts, sql/migrations/033). The worker job
 * (workers/jobs/deliverability-alerts.ts) reads the day's counts from ClickHouse and hands them
 * here: readingsOf turns one (provider, sending domain)'s counts into the two metrics' statuses,
 * nextAlert compares each with what the receivers were last told, recordAlerts claims and
 * appends the events.
 */

export type AlertKind = 'crossed' | 'recovered';
export type AlertStatus = Exclude<RateStatus, 'no_data'>;

export interface SeriesKey {
  provider: string;
  /** The sending domain (lower case). */
  domain: string;
  metric: Metric;
}

/** One metric of one (provider, domain) for the day, at or above the minimum volume. */
export interface Reading extends SeriesKey {
  status: RateStatus;
  rate: number;
  delivered: number;
  /** The rate's divisor: delivered for complaint_rate, delivered + bounced (hard and soft) for bounce_rate. */
  volume: number;
  /** Complaints, or hard bounces. */
  count: number;
}

/** What the receivers were told of a series today: the newest event's status, and the statuses already crossed. */
export interface SeriesState {
  /** The seq the next event of the series claims (the number it has). */
  next: number;
  status: AlertStatus;
  crossed: ReadonlySet<AlertStatus>;
}

export interface Alert extends Omit<Reading, 'status'> {
  seq: number;
  kind: AlertKind;
  status: AlertStatus;
  threshold: number;
}

export const seriesId = (k: SeriesKey): string => JSON.stringify([k.provider, k.domain, k.metric]);

// As the figures round them (analytics/deliverability/figures.ts): a rate of 1 in a million still shows.
const rounded = (rate: number) => Math.round(rate * 1e6) / 1e6;

/**
 * The readings of one (provider, domain)'s counts of the day: each metric whose volume reaches
 * `minDelivered`. The volume is the rate's own divisor: delivered mails for the complaint rate,
 * delivered plus bounced ones for the bounce rate (a sender whose mail all bounces delivers
 * nothing, and must still be told). Statuses as the figures give them (complaintStatus: no_data
 * for a provider without per-message complaint reports while none arrived).
 */
export function readingsOf(provider: ProviderId, domain: string, c: RateCounts, minDelivered: number): Reading[] {
  const rates = ratesOf(c);
  const out: Reading[] = [];
  if (c.delivered >= minDelivered && rates.complaint_rate !== null) {
    out.push({
      provider, domain, metric: 'complaint_rate', status: complaintStatus(provider, c.complaints, rates.complaint_rate),
      rate: rounded(rates.complaint_rate), delivered: c.delivered, volume: c.delivered, count: c.complaints,
    });
  }
  const answered = c.delivered + c.bounced_hard + c.bounced_soft;
  if (answered >= minDelivered && rates.bounce_rate !== null) {
    out.push({
      provider, domain, metric: 'bounce_rate', status: statusOf('bounce_rate', rates.bounce_rate),
      rate: rounded(rates.bounce_rate), delivered: c.delivered, volume: answered, count: c.bounced_hard,
    });
  }
  return out;
}

/**
 * The event a reading calls for, given what the series told today (undefined: nothing yet, as
 * ok), or none:
 *  - a status worse than the one told is crossed (ok → warning, warning → critical, ok → critical
 *    at once), unless it was already crossed today: once per status and day, even after a
 *    recovery in between (the receivers then keep the recovered status until a worse one);
 *  - a status better than the one told is a recovery, its threshold the one the rate fell back
 *    below (critical's for a recovery to warning, warning's for one to ok);
 *  - no_data (the complaints of a provider that reports none) never alerts, either way.
 */
export function nextAlert(state: SeriesState | undefined, r: Reading): Alert | undefined {
  if (r.status === 'no_data') return undefined;
  const told = state?.status ?? 'ok';
  const now = r.status;
  const t = THRESHOLDS[r.metric];
  const base = { provider: r.provider, domain: r.domain, metric: r.metric, rate: r.rate, delivered: r.delivered, volume: r.volume, count: r.count, seq: state?.next ?? 0 };
  if (severity(now) > severity(told)) {
    if (state?.crossed.has(now)) return undefined;
    return { ...base, kind: 'crossed', status: now, threshold: now === 'critical' ? t.critical : t.warning };
  }
  if (severity(now) < severity(told)) return { ...base, kind: 'recovered', status: now, threshold: now === 'warning' ? t.critical : t.warning };
  return undefined;
}

/** An instance to evaluate, with the local day it is at. */
export interface ActiveInstance {
  tenant: Tenant;
  /** Its current local date (YYYY-MM-DD in its zone). */
  day: string;
}

/**
 * The instances that received mail since the start of their current local day (instances.tz,
 * else UTC), with that day: one index probe each (mails_received_idx), so an idle instance costs
 * nothing more. Without a mail received today nothing was delivered today, and no metric of the
 * day reaches a minimum volume. An instance whose zone is not known (it cannot be set through
 * the API) is evaluated in UTC, its tenant's tz null, rather than not at all.
 */
export async function instancesWithMailToday(pool: Pool, now: Date): Promise<ActiveInstance[]> {
  const { rows } = await pool.query<{ id: string; slug: string; tz: string | null }>({
    name: 'deliverability_alerts_instances',
    text: 'SELECT id, slug, tz FROM instances ORDER BY id',
  });
  const all = rows.map((r) => {
    let tz = r.tz;
    let local = DateTime.fromJSDate(now, { zone: tz ?? 'UTC' });
    if (!local.isValid) [tz, local] = [null, DateTime.fromJSDate(now, { zone: 'UTC' })];
    return { tenant: { instanceId: Number(r.id), slug: r.slug, tz }, day: local.toISODate()!, since: local.startOf('day').toJSDate() };
  });
  if (!all.length) return [];
  const { rows: active } = await pool.query<{ id: string }>({
    name: 'deliverability_alerts_active',
    text: `SELECT q.id FROM unnest($1::bigint[], $2::timestamptz[]) AS q(id, since)
            WHERE EXISTS (SELECT 1 FROM mails m WHERE m.instance_id = q.id AND m.received_at >= q.since)`,
    values: [all.map((a) => a.tenant.instanceId), all.map((a) => a.since)],
  });
  const ids = new Set(active.map((r) => Number(r.id)));
  return all.filter((a) => ids.has(a.tenant.instanceId)).map(({ tenant, day }) => ({ tenant, day }));
}

/** What each series of the instance told today, by seriesId. */
export async function seriesStates(pool: Pool, tenant: Pick<Tenant, 'instanceId'>, day: string): Promise<Map<string, SeriesState>> {
  const { rows } = await pool.query<{ provider: string; domain: string; metric: Metric; next: number; status: AlertStatus; crossed: AlertStatus[] | null }>({
    name: 'deliverability_alerts_states',
    text: `SELECT provider, domain, metric, max(seq) + 1 AS next, (array_agg(status ORDER BY seq DESC))[1] AS status,
                  array_agg(status) FILTER (WHERE kind = 'crossed') AS crossed
             FROM deliverability_alerts WHERE instance_id = $1 AND day = $2::date
            GROUP BY provider, domain, metric`,
    values: [tenant.instanceId, day],
  });
  return new Map(rows.map((r) => [seriesId(r), { next: Number(r.next), status: r.status, crossed: new Set(r.crossed ?? []) }]));
}

/**
 * Claims the alerts and appends their events, in one transaction: a row of the unique keys
 * (series, seq) and (series, crossed status) that another evaluation already has (another
 * worker, or this one before a restart) is not inserted, and has no event. Returns the ids of
 * the events appended, in outbox order.
 */
export async function recordAlerts(pool: Pool, tenant: Pick<Tenant, 'instanceId'>, day: string, alerts: readonly Alert[]): Promise<string[]> {
  if (!alerts.length) return [];
  return withTransaction(pool, async (c) => {
    const { rows } = await c.query<{ id: string; kind: AlertKind }>({
      name: 'deliverability_alerts_claim',
      text: `INSERT INTO deliverability_alerts (instance_id, day, provider, domain, metric, seq, kind, status, rate, threshold, delivered, volume, count)
             SELECT $1, $2::date, a.* FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[],
                                                  $9::float8[], $10::float8[], $11::bigint[], $12::bigint[], $13::bigint[])
                                        AS a(provider, domain, metric, seq, kind, status, rate, threshold, delivered, volume, count)
             ON CONFLICT DO NOTHING
             RETURNING id, kind`,
      values: [
        tenant.instanceId, day,
        alerts.map((a) => a.provider), alerts.map((a) => a.domain), alerts.map((a) => a.metric), alerts.map((a) => a.seq),
        alerts.map((a) => a.kind), alerts.map((a) => a.status), alerts.map((a) => a.rate), alerts.map((a) => a.threshold),
        alerts.map((a) => a.delivered), alerts.map((a) => a.volume), alerts.map((a) => a.count),
      ],
    });
    const claimed = rows.sort((x, y) => Number(x.id) - Number(y.id));
    return append(tenant, c, claimed.map((r) => ({ kind: `deliverability.threshold_${r.kind}` as const, entityId: r.id })));
  });
}

/** Rows of days long gone: the state only matters on its day; kept as long as the mails (3 months) for a look back. */
export async function purgeDeliverabilityAlerts(pool: Pool): Promise<number> {
  const r = await pool.query(`DELETE FROM deliverability_alerts WHERE created_at < now() - interval '92 days'`);
  return r.rowCount ?? 0;
}
