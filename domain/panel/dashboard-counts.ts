import type { Pool } from '../../sql/pool.js';
import { retentionStart } from '../mail/ids.js';
import type { RestrictionReason } from '../restrictions/restrictions.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import type { DashboardRange } from './dashboard-range.js';

/**
 * The dashboard's figures that live in Postgres, read where their public listings read them so
 * the numbers are the same (docs/panel.md, "Dashboard"): complaints (GET /v1/mail-complaints:
 * mail_complaints joined to a mail still inside the retention window, dates on complained_at)
 * and restrictions (GET /v1/mail-restrictions: every row of mail_restrictions, lifted ones
 * included, here those whose restricted_at falls in the range). Days are local dates in the
 * range's zone.
 */

export interface DayCount {
  day: string;
  n: number;
}

export interface RestrictionDayCount extends DayCount {
  reason: RestrictionReason;
}

export async function complaintsPerDay(tenant: Tenant, pool: Pool, range: DashboardRange): Promise<DayCount[]> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<DayCount>({
      name: 'dashboard-complaints',
      text: `SELECT to_char(k.complained_at AT TIME ZONE $4, 'YYYY-MM-DD') AS day, count(*)::int AS n
               FROM mail_complaints k
               JOIN mails m ON m.instance_id = k.instance_id AND m.mail_id = k.mail_id
              WHERE k.instance_id = $1 AND m.received_at >= $5
                AND k.complained_at >= $2 AND k.complained_at < $3
              GROUP BY 1`,
      values: [tenant.instanceId, range.from, range.to, range.tz, retentionStart()],
    }),
  );
  return rows;
}

export async function restrictionsPerDay(tenant: Tenant, pool: Pool, range: DashboardRange): Promise<RestrictionDayCount[]> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<RestrictionDayCount>({
      name: 'dashboard-restrictions',
      text: `SELECT to_char(restricted_at AT TIME ZONE $4, 'YYYY-MM-DD') AS day, reason, count(*)::int AS n
               FROM mail_restrictions
              WHERE instance_id = $1 AND restricted_at >= $2 AND restricted_at < $3
              GROUP BY 1, 2`,
      values: [tenant.instanceId, range.from, range.to, range.tz],
    }),
  );
  return rows;
}
