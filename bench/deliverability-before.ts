import type { DashboardRange } from '../domain/panel/dashboard-range.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { activityWhere, type Where } from '../analytics/activities/filters.js';
import type { CountKey, CountsFilter } from '../analytics/deliverability/counts.js';

/**
 * The two per-provider count queries of analytics/deliverability/counts.ts as they were at
 * 1bf999b (before bench/analytics measured them at 10 M mails), byte for byte but for the names:
 * bench/analytics-providers.ts runs them beside the current ones on the same data and checks that
 * both give the same rows, and times both. Not used by the service.
 */

const SENDER_DOMAIN = `substring(assumeNotNull(sender), position(assumeNotNull(sender), '@') + 1)`;

function keySql(key: CountKey, timeColumn: string): string {
  if (key === 'provider') return 'provider';
  if (key === 'day') return `toString(toDate(${timeColumn}, {tz:String}))`;
  return SENDER_DOMAIN;
}

function narrowed(where: Where, f: CountsFilter): Where {
  const conditions = [where.sql];
  const params = { ...where.params };
  if (f.domain !== undefined) {
    conditions.push('endsWith(sender, {sender_at:String})');
    params.sender_at = `@${f.domain.toLowerCase()}`;
  }
  if (f.provider !== undefined) {
    conditions.push('provider = {provider:String}');
    params.provider = f.provider;
  }
  return { sql: conditions.join(' AND '), params };
}

export interface BeforeQuery {
  name: string;
  sql: string;
  params: Record<string, unknown>;
}

export function mailCountsQueryBefore(tenant: Tenant, range: DashboardRange, f: CountsFilter, keys: readonly CountKey[]): BeforeQuery {
  const where = narrowed(activityWhere(tenant, range, 'received_at'), f);
  const select = keys.map((k) => `${keySql(k, 'received_at')} AS ${k}`);
  return {
    name: 'deliverability.mails.before',
    sql: `SELECT ${[...select,
      'toUInt32(count()) AS sent',
      'toUInt32(countIf(status = 3)) AS delivered',
      'toUInt32(countIf(status = 5)) AS deferred',
      `toUInt32(countIf(status = 6 AND bounce_class = 'hard')) AS bounced_hard`,
      `toUInt32(countIf(status = 6 AND bounce_class != 'hard')) AS bounced_soft`].join(', ')}
    FROM mails FINAL WHERE ${where.sql}${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`,
    params: { ...where.params, tz: range.tz },
  };
}

export function eventCountsQueryBefore(tenant: Tenant, range: DashboardRange, f: CountsFilter, keys: readonly CountKey[]): BeforeQuery {
  const where = narrowed(activityWhere(tenant, range, 'occurred_at'), f);
  const inner = keys.map((k) => `any(${keySql(k, 'occurred_at')}) AS k_${k}`);
  const outer = keys.map((k) => `k_${k}`);
  return {
    name: 'deliverability.events.before',
    sql: `SELECT ${[...keys.map((k) => `k_${k} AS ${k}`),
      `toUInt32(countIf(event_type = 'complaint')) AS complaints`,
      `toUInt32(countIf(event_type = 'unsubscribe')) AS unsubscribed`,
      `toUInt32(countIf(event_type = 'open')) AS opened`,
      `toUInt32(countIf(event_type = 'open' AND newest_machine = '')) AS opened_human`].join(', ')}
    FROM (SELECT ${[...inner, 'event_type', 'argMax(machine, shipped_at) AS newest_machine'].join(', ')}
          FROM mail_events WHERE ${where.sql} AND event_type IN ('complaint', 'unsubscribe', 'open')
          GROUP BY event_type, event_id)${keys.length ? ` GROUP BY ${outer.join(', ')}` : ''}`,
    params: { ...where.params, tz: range.tz },
  };
}
