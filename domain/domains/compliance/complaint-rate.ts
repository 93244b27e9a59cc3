import { dashboardRange, type DashboardRange } from '../../panel/dashboard-range.js';
import type { Tenant } from '../../tenancy/context.js';
import { check, SOURCES, type ComplianceCheck } from './check.js';

export const COMPLAINT_RULE = { rule: 'complaint_rate', applies_to: ['gmail', 'yahoo'], source: SOURCES.google } as const;

export const COMPLAINT_WINDOW_DAYS = 7;

/** The last 7 local days of the instance's zone (else UTC), today included: the figures' range rules (dashboard-range.ts). */
export function complaintRange(tenant: Pick<Tenant, 'tz'>, now = new Date()): DashboardRange {
  const today = dashboardRange({}, tenant.tz, now).end_date;
  const last30 = dashboardRange({ end_date: today }, tenant.tz, now).days;
  return dashboardRange({ start_date: last30[last30.length - COMPLAINT_WINDOW_DAYS]!, end_date: today }, tenant.tz, now);
}

/** One provider's complaint figures over the window, as the deliverability figures give them (issue 40, Figures). */
export interface ProviderComplaints {
  provider: string;
  delivered: number;
  complaints: number;
  complaint_rate: number | null;
  /** ok below 0.1 %, warning from 0.1 %, critical from 0.3 %; no_data where the provider sends no per-message reports. */
  complaint_status: 'ok' | 'warning' | 'critical' | 'no_data' | string;
}

const percent = (rate: number | null) => (rate === null ? 'n/a' : `${(rate * 100).toFixed(2)} %`);

/**
 * The complaint rate per provider over the last 7 days, below 0.3 % (Google and Yahoo; 0.1 % is
 * their warning line):  any provider critical → fail;  any warning → warn;  all ok → pass;
 *  no figures, or only providers without per-message reports (Gmail) → unknown.
 */
export function complaintCheck(rows: readonly ProviderComplaints[] | 'unavailable'): ComplianceCheck {
  const window = `the last ${COMPLAINT_WINDOW_DAYS} days`;
  if (rows === 'unavailable') return check(COMPLAINT_RULE, 'unknown', `The complaint figures could not be read just now; try again later.`);
  const judged = rows.filter((r) => r.delivered > 0 && (r.complaint_status === 'ok' || r.complaint_status === 'warning' || r.complaint_status === 'critical'));
  const list = (status: string) =>
    judged
      .filter((r) => r.complaint_status === status)
      .map((r) => `${r.provider} ${percent(r.complaint_rate)} (${r.complaints} of ${r.delivered})`)
      .join(', ');
  if (judged.some((r) => r.complaint_status === 'critical')) {
    return check(COMPLAINT_RULE, 'fail', `Complaint rate at or above 0.3 % over ${window}: ${list('critical')}.`);
  }
  if (judged.some((r) => r.complaint_status === 'warning')) {
    return check(COMPLAINT_RULE, 'warn', `Complaint rate at or above 0.1 % (under 0.3 %) over ${window}: ${list('warning')}.`);
  }
  if (!judged.length) {
    const noData = rows.filter((r) => r.complaint_status === 'no_data' && r.delivered > 0).map((r) => r.provider);
    const why = noData.length ? ` (${noData.join(', ')} send${noData.length === 1 ? 's' : ''} no per-message complaint reports)` : '';
    return check(COMPLAINT_RULE, 'unknown', `No delivered mail with complaint figures over ${window}${why}.`);
  }
  return check(COMPLAINT_RULE, 'pass', `Complaint rate under 0.1 % at every provider over ${window}: ${list('ok')}.`);
}
