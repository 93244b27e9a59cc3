import { providerById, type ProviderId } from './table.js';

/**
 * The rates a sender is held to, and the status of a rate against them (docs/deliverability.md,
 * "Statuses", with the sources).
 *
 * Complaints: Google's and Yahoo's bulk-sender rules ask for a spam rate below 0.1 % and never
 * reaching 0.3 %; Microsoft's Outlook.com rules of May 2025 point to the same practice. So
 * warning from 0.1 %, critical from 0.3 %.
 *
 * Hard bounces: no mailbox provider publishes a number; the senders' own gates do. Amazon SES puts
 * an account under review at a 5 % bounce rate and recommends staying below 2 %; SendGrid and
 * Mailgun recommend below 2 % as well. So warning from 2 %, critical from 5 %.
 */
export const METRICS = ['complaint_rate', 'bounce_rate'] as const;
export type Metric = (typeof METRICS)[number];

export const STATUSES = ['no_data', 'ok', 'warning', 'critical'] as const;
export type RateStatus = (typeof STATUSES)[number];

export const THRESHOLDS: Record<Metric, { warning: number; critical: number }> = {
  complaint_rate: { warning: 0.001, critical: 0.003 },
  bounce_rate: { warning: 0.02, critical: 0.05 },
};

/** A rate's status; no_data when the rate cannot be computed (nothing to divide by). */
export function statusOf(metric: Metric, rate: number | null): RateStatus {
  if (rate === null) return 'no_data';
  const t = THRESHOLDS[metric];
  return rate >= t.critical ? 'critical' : rate >= t.warning ? 'warning' : 'ok';
}

/** How bad a status is, to tell a worsening from a recovery: no_data and ok are both "nothing wrong". */
export function severity(status: RateStatus): number {
  return status === 'critical' ? 2 : status === 'warning' ? 1 : 0;
}

export interface RateCounts {
  delivered: number;
  bounced_hard: number;
  bounced_soft: number;
  complaints: number;
}

/**
 * complaint_rate = complaints ÷ delivered. bounce_rate = hard bounces ÷ mails that reached an
 * answer (delivered + bounced): dropped, on-hold and waiting mails never met the provider.
 * Null when the divisor is 0.
 */
export function ratesOf(c: RateCounts): { complaint_rate: number | null; bounce_rate: number | null } {
  const answered = c.delivered + c.bounced_hard + c.bounced_soft;
  return {
    complaint_rate: c.delivered ? c.complaints / c.delivered : null,
    bounce_rate: answered ? c.bounced_hard / answered : null,
  };
}

/**
 * The complaint status of a provider's figures. A provider that sends no per-message reports
 * (Gmail, Google Workspace...) has no_data while no complaint arrived: its 0 is unknown, not
 * 0 %; a complaint that did arrive (a user's report forwarded by other means) still counts, as a
 * floor.
 */
export function complaintStatus(provider: ProviderId, complaints: number, rate: number | null): RateStatus {
  if (!providerById(provider).perMessageComplaints && complaints === 0) return 'no_data';
  return statusOf('complaint_rate', rate);
}
