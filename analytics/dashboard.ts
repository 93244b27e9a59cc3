import type { ClickHouseClient } from '@clickhouse/client';
import type { DashboardRange } from '../domain/panel/dashboard-range.js';
import { complaintsPerDay, restrictionsPerDay } from '../domain/panel/dashboard-counts.js';
import type { Tenant } from '../domain/tenancy/context.js';
import type { Pool } from '../sql/pool.js';
import { activityWhere } from './activities/filters.js';
import type { ResultColumn } from './activities/query.js';
import { readChecked, type CheckedQuery } from './activities/rows.js';

/**
 * GET /v1/private/dashboard: per local day of a range, the figures of the activity listings for
 * that day, each counted where and as its listing counts it (docs/panel.md, "Dashboard"):
 *
 *  - sent, delivered, bounced (hard, soft): the `mails` mirror, each mail's newest snapshot,
 *    by reception day: the rows of GET /v1/activities/sent (status=3, status=6); the delivered
 *    ones opened and clicked, raw and human (the rates), from the same snapshots' counts;
 *  - opened, clicked (human, machine): `mail_events`, one per event (its newest copy decides
 *    the machine flag), by event day: total_items of GET /v1/activities/opens and clicks, with
 *    exclude_machine=true for the human part;
 *  - bounce reasons: the reason of the latest move to bounced of each mail counted as bounced;
 *  - complained, restricted: Postgres, where their listings read them (domain/panel/dashboard-counts.ts).
 *
 * The date bounds come from activityWhere, the listings' own WHERE, so a day here and a listing
 * asked for that day read the same range of the key. In cluster mode the queries run unchanged
 * through the Distributed tables: every copy of an event or snapshot of a mail lands on the
 * shard of its message, so FINAL and GROUP BY event_id merge them as on one node, and the
 * bounce reasons' subquery on the mirror runs per shard (distributed_product_mode = 'local').
 */

export interface DashboardFigures {
  sent: number;
  delivered: number;
  bounced: number;
  bounced_hard: number;
  bounced_soft: number;
  complained: number;
  opened: number;
  opened_human: number;
  opened_machine: number;
  clicked: number;
  clicked_human: number;
  clicked_machine: number;
  /** Of the delivered mails: those with an open, with an open not flagged (the rates' numerators). */
  delivered_opened: number;
  delivered_opened_human: number;
  delivered_clicked: number;
  delivered_clicked_human: number;
  restricted: number;
}

export interface Dashboard {
  start_date: string;
  end_date: string;
  tz: string;
  days: Array<{ date: string } & DashboardFigures>;
  totals: DashboardFigures;
  bounce_reasons: Array<{ reason: string | null; count: number }>;
  restrictions: Array<{ reason: string; count: number }>;
}

/** How many bounce reasons the dashboard lists, most frequent first. */
export const TOP_BOUNCE_REASONS = 10;

const zero = (): DashboardFigures => ({
  sent: 0, delivered: 0, bounced: 0, bounced_hard: 0, bounced_soft: 0, complained: 0,
  opened: 0, opened_human: 0, opened_machine: 0, clicked: 0, clicked_human: 0, clicked_machine: 0,
  delivered_opened: 0, delivered_opened_human: 0, delivered_clicked: 0, delivered_clicked_human: 0, restricted: 0,
});



const filterOf = (range: DashboardRange) => ({ start_date: range.start_date, end_date: range.end_date, tz: range.tz });

/**
 * The mails received per day, by their newest snapshot (FINAL): all of them (the sent listing's
 * rows), delivered (status 3) and bounced (status 6), bounced split by the mirror's bounce_class
 * (hard; everything else bounced is soft, as the classifier judges whatever is not hard); and of
 * the delivered ones, those opened and clicked, at all and by a person (the snapshot's counts:
 * opens > 0, human_opens > 0), the numerators of the open and click rates, raw and human. A mail
 * opened before human counts existed (human_opens null) counts as opened, not as opened by a person.
 */
export function mailsPerDayQuery(tenant: Tenant, range: DashboardRange): CheckedQuery {
  const where = activityWhere(tenant, filterOf(range), 'received_at');
  return {
    name: 'dashboard.mails',
    sql: `SELECT toString(toDate(received_at, {tz:String})) AS day, toUInt32(count()) AS sent,
    toUInt32(countIf(status = 3)) AS delivered, toUInt32(countIf(status = 6)) AS bounced,
    toUInt32(countIf(status = 6 AND bounce_class = 'hard')) AS bounced_hard,
    toUInt32(countIf(status = 3 AND opens > 0)) AS delivered_opened, toUInt32(countIf(status = 3 AND human_opens > 0)) AS delivered_opened_human,
    toUInt32(countIf(status = 3 AND clicks > 0)) AS delivered_clicked, toUInt32(countIf(status = 3 AND human_clicks > 0)) AS delivered_clicked_human
    FROM mails FINAL WHERE ${where.sql} GROUP BY day`,
    params: { ...where.params, tz: range.tz },
    columns: [
      { name: 'day', kind: 'text' }, { name: 'sent', kind: 'number' }, { name: 'delivered', kind: 'number' },
      { name: 'bounced', kind: 'number' }, { name: 'bounced_hard', kind: 'number' },
      ...(['delivered_opened', 'delivered_opened_human', 'delivered_clicked', 'delivered_clicked_human'] as const).map((name) => ({ name, kind: 'number' as const })),
    ],
  };
}

/**
 * Opens and clicks per day: each event once (its copies share event_id), with its newest flag
 * (argMax over shipped_at), as the listings' count does (event-rows.ts, eventCountQuery); human =
 * not flagged. One read of two key ranges, (instance, 'click', range) and (instance, 'open', range).
 */
export function eventsPerDayQuery(tenant: Tenant, range: DashboardRange): CheckedQuery {
  const where = activityWhere(tenant, filterOf(range), 'occurred_at');
  return {
    name: 'dashboard.events',
    sql: `SELECT event_type, toString(toDate(at, {tz:String})) AS day, toUInt32(count()) AS n, toUInt32(countIf(newest_machine = '')) AS human
    FROM (SELECT event_type, event_id, any(occurred_at) AS at, argMax(machine, shipped_at) AS newest_machine
          FROM mail_events WHERE ${where.sql} AND event_type IN ('open', 'click') GROUP BY event_type, event_id)
    GROUP BY event_type, day`,
    params: { ...where.params, tz: range.tz },
    columns: [{ name: 'event_type', kind: 'text' }, { name: 'day', kind: 'text' }, { name: 'n', kind: 'number' }, { name: 'human', kind: 'number' }],
  };
}

/**
 * Why the bounced mails of the range bounced: for each mail counted as bounced (newest snapshot
 * at status 6), the bounce_reason of its latest move to bounced (null when it has none: moves
 * shipped before reasons were recorded), counted per reason. So the counts add up to `bounced`.
 * Its moves cannot precede its reception, hence the lower bound on occurred_at (the key).
 */
export function bounceReasonsQuery(tenant: Tenant, range: DashboardRange): CheckedQuery {
  const where = activityWhere(tenant, filterOf(range), 'received_at');
  return {
    name: 'dashboard.bounce_reasons',
    sql: `SELECT reason, toUInt32(count()) AS count
    FROM (SELECT mail_id, argMax(bounce_reason, (occurred_at, event_id)) AS reason
          FROM mail_events
          WHERE instance_id = {instance_id:UInt64} AND event_type = 'bounced' AND occurred_at >= {from:DateTime64(3, 'UTC')}
            AND mail_id IN (SELECT mail_id FROM mails FINAL WHERE ${where.sql} AND status = 6)
          GROUP BY mail_id)
    GROUP BY reason ORDER BY count DESC, reason LIMIT ${TOP_BOUNCE_REASONS}`,
    params: where.params,
    columns: [{ name: 'reason', kind: 'text', nullable: true }, { name: 'count', kind: 'number' }],
  };
}

export async function dashboard(tenant: Tenant, ch: ClickHouseClient, pool: Pool, range: DashboardRange): Promise<Dashboard> {
  const [mails, events, reasons, complaints, restrictions] = await Promise.all([
    readChecked(ch, mailsPerDayQuery(tenant, range)),
    readChecked(ch, eventsPerDayQuery(tenant, range)),
    readChecked(ch, bounceReasonsQuery(tenant, range)),
    complaintsPerDay(tenant, pool, range),
    restrictionsPerDay(tenant, pool, range),
  ]);
  const byDay = new Map(range.days.map((d) => [d, zero()]));
  // A row outside the range's days would be a bug in a bound; ignoring it keeps totals = sum of days.
  const at = (day: unknown) => byDay.get(String(day));
  for (const r of mails) {
    const f = at(r.day);
    if (!f) continue;
    f.sent = Number(r.sent);
    f.delivered = Number(r.delivered);
    f.bounced = Number(r.bounced);
    f.bounced_hard = Number(r.bounced_hard);
    f.bounced_soft = f.bounced - f.bounced_hard;
    f.delivered_opened = Number(r.delivered_opened);
    f.delivered_opened_human = Number(r.delivered_opened_human);
    f.delivered_clicked = Number(r.delivered_clicked);
    f.delivered_clicked_human = Number(r.delivered_clicked_human);
  }
  for (const r of events) {
    const f = at(r.day);
    if (!f) continue;
    const n = Number(r.n);
    const human = Number(r.human);
    if (r.event_type === 'open') Object.assign(f, { opened: n, opened_human: human, opened_machine: n - human });
    else Object.assign(f, { clicked: n, clicked_human: human, clicked_machine: n - human });
  }
  for (const r of complaints) {
    const f = at(r.day);
    if (f) f.complained = r.n;
  }
  const perReason = new Map<string, number>();
  for (const r of restrictions) {
    const f = at(r.day);
    if (!f) continue;
    f.restricted += r.n;
    perReason.set(r.reason, (perReason.get(r.reason) ?? 0) + r.n);
  }
  const totals = zero();
  for (const f of byDay.values()) for (const k of Object.keys(totals) as Array<keyof DashboardFigures>) totals[k] += f[k];
  return {
    start_date: range.start_date,
    end_date: range.end_date,
    tz: range.tz,
    days: [...byDay].map(([date, f]) => ({ date, ...f })),
    totals,
    bounce_reasons: reasons.map((r) => ({ reason: (r.reason as string | null) ?? null, count: Number(r.count) })),
    restrictions: [...perReason].map(([reason, count]) => ({ reason, count })).sort((x, y) => y.count - x.count || x.reason.localeCompare(y.reason)),
  };
}
