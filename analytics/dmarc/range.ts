import type { Tenant } from '../../domain/tenancy/context.js';
import { toUtcRange, type LocalDateFilter } from '../../domain/time/local-date-range.js';
import { chDateTime } from '../client.js';
import { DATETIME_PARAM, type Where } from '../activities/filters.js';

/**
 * The rows of one domain's DMARC reports whose reported period began inside the spec's local
 * dates (start_date, end_date, tz; else the instance's zone, else UTC), as the WHERE clause of
 * dmarc_reports and dmarc_records alike: both are sorted by (instance_id, domain, begin_at, ...),
 * so this is one range of their key. `domain` is the domain's name as Postgres stores it (the
 * route has already found it in the tenant's domains). A bad date or zone is a 422 from
 * toUtcRange, before any query runs.
 */
export function dmarcWhere(tenant: Tenant, domain: string, dates: LocalDateFilter): Where {
  const range = toUtcRange(dates, tenant.tz);
  const conditions = ['instance_id = {instance_id:UInt64}', 'domain = {domain:String}'];
  const params: Record<string, unknown> = { instance_id: tenant.instanceId, domain };
  if (range.from) {
    conditions.push(`begin_at >= {from:${DATETIME_PARAM}}`);
    params.from = chDateTime(range.from);
  }
  if (range.to) {
    conditions.push(`begin_at < {to:${DATETIME_PARAM}}`);
    params.to = chDateTime(range.to);
  }
  return { sql: conditions.join(' AND '), params };
}
