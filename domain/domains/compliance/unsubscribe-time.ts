import type { Client } from '../../../sql/pool.js';
import type { Tenant } from '../../tenancy/context.js';
import { check, SOURCES, type ComplianceCheck } from './check.js';

export const UNSUBSCRIBE_TIME_RULE = { rule: 'unsubscribe_within_2_days', applies_to: ['gmail', 'yahoo'], source: SOURCES.yahoo } as const;

export const UNSUBSCRIBE_WINDOW_DAYS = 30;
export const UNSUBSCRIBE_LIMIT_SECONDS = 2 * 86_400;

export interface UnsubscribeTimes {
  /** Unsubscribes of the domain's mails received in the window. */
  count: number;
  /** The slowest time from an unsubscribe received to its address being restricted, of those in force; null: none is. */
  slowestSeconds: number | null;
  /** Unsubscribes not in force now, older than 2 days (broken) and younger (still to do). */
  overdue: number;
  waiting: number;
}

/**
 * Cartero's own processing time of the domain's unsubscribes of the last 30 days, measured from
 * what it stored: an unsubscribe is received when its mail_unsubscribes row is written, and in
 * force from when a restriction on the address holds it (mail_restrictions: the one created for
 * it, or one already in force then for another cause; a restriction lifted before the
 * unsubscribe does not count, one lifted after it, by a resubscribe, does). Both are written in
 * one transaction today (domain/tracking/unsubscribe.ts), so the time is 0 unless that breaks:
 * this is the measurement that would show it. In the tenant's transaction.
 */
export async function unsubscribeTimes(tenant: Tenant, c: Client, domainId: number, now: Date): Promise<UnsubscribeTimes> {
  const { rows } = await c.query<UnsubscribeTimes>(
    `WITH u AS (
       SELECT u.unsubscribed_at,
              (SELECT min(greatest(r.restricted_at, u.unsubscribed_at)) FROM mail_restrictions r
                WHERE r.instance_id = u.instance_id AND r.recipient = lower(m.to_email)
                  AND (r.deleted_at IS NULL OR r.deleted_at > u.unsubscribed_at)) AS in_force_at
         FROM mail_unsubscribes u
         JOIN mails m ON m.mail_id = u.mail_id AND m.instance_id = u.instance_id
         JOIN senders s ON s.instance_id = m.instance_id AND s.id = m.sender_id
        WHERE u.instance_id = $1 AND s.domain_id = $2 AND u.unsubscribed_at > $3::timestamptz - make_interval(days => $4))
     SELECT count(*)::int AS count,
            max(extract(epoch FROM in_force_at - unsubscribed_at))::float8 AS "slowestSeconds",
            count(*) FILTER (WHERE in_force_at IS NULL AND unsubscribed_at <= $3::timestamptz - make_interval(secs => $5))::int AS overdue,
            count(*) FILTER (WHERE in_force_at IS NULL AND unsubscribed_at > $3::timestamptz - make_interval(secs => $5))::int AS waiting
       FROM u`,
    [tenant.instanceId, domainId, now, UNSUBSCRIBE_WINDOW_DAYS, UNSUBSCRIBE_LIMIT_SECONDS],
  );
  return rows[0]!;
}

function duration(seconds: number): string {
  if (seconds < 1) return 'under a second';
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3_600)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

/**
 *   none in the window → unknown;  one in force after 2 days or more, or not yet after 2 days → fail;
 *   one not in force yet, younger than 2 days → warn;  all in force within 2 days → pass
 */
export function unsubscribeTimeCheck(t: UnsubscribeTimes): ComplianceCheck {
  const window = `the last ${UNSUBSCRIBE_WINDOW_DAYS} days`;
  if (t.count === 0) return check(UNSUBSCRIBE_TIME_RULE, 'unknown', `No unsubscribe from the domain's mail in ${window} to measure.`);
  const slowest = t.slowestSeconds === null ? '' : `; the slowest took ${duration(t.slowestSeconds)}`;
  if (t.overdue > 0 || (t.slowestSeconds ?? 0) >= UNSUBSCRIBE_LIMIT_SECONDS) {
    const late = t.overdue > 0 ? `${t.overdue} of ${t.count} unsubscribes of ${window} are still not in force after 2 days` : `An unsubscribe of ${window} took over 2 days to be in force`;
    return check(UNSUBSCRIBE_TIME_RULE, 'fail', `${late}${slowest}.`);
  }
  if (t.waiting > 0) return check(UNSUBSCRIBE_TIME_RULE, 'warn', `${t.waiting} of ${t.count} unsubscribes of ${window} are not in force yet${slowest}.`);
  return check(UNSUBSCRIBE_TIME_RULE, 'pass', `${t.count} unsubscribe${t.count === 1 ? '' : 's'} of ${window}, each in force within 2 days${slowest}.`);
}
