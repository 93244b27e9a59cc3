import type { ClickHouseClient } from '@clickhouse/client';
import { complaintStatus, ratesOf, statusOf, type RateStatus } from '../../engines/providers/thresholds.js';
import { isProviderId, type ProviderId } from '../../engines/providers/table.js';
import type { DashboardRange } from '../../domain/panel/dashboard-range.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { countsBy, zeroCounts, type Counts } from './counts.js';

/**
 * GET /v1/deliverability/providers and /providers/{provider}/daily (docs/deliverability.md): the
 * counts of counts.ts with their rates and statuses against the bulk-sender thresholds
 * (engines/providers/thresholds.ts).
 */
export interface ProviderFigures extends Counts {
  complaint_rate: number | null;
  bounce_rate: number | null;
  complaint_status: RateStatus;
  bounce_status: RateStatus;
}

export interface DeliverabilityFilter {
  /** One sending domain, or all of the instance's. */
  domain?: string;
}

// Six significant decimals: a rate of 1 in a million still shows, and float noise does not.
const rounded = (rate: number | null) => (rate === null ? null : Math.round(rate * 1e6) / 1e6);

export function withRates(provider: ProviderId, c: Counts): ProviderFigures {
  const rates = ratesOf(c);
  return {
    ...c,
    complaint_rate: rounded(rates.complaint_rate),
    bounce_rate: rounded(rates.bounce_rate),
    complaint_status: complaintStatus(provider, c.complaints, rates.complaint_rate),
    bounce_status: statusOf('bounce_rate', rates.bounce_rate),
  };
}

/** One row per provider with any mail or event in the range, most mails first. */
export async function providerFigures(
  tenant: Tenant,
  ch: ClickHouseClient,
  range: DashboardRange,
  f: DeliverabilityFilter,
): Promise<Array<{ provider: ProviderId } & ProviderFigures>> {
  const rows = await countsBy(tenant, ch, range, { domain: f.domain }, ['provider']);
  return rows
    // A value no release wrote (a hand-made row in ClickHouse) is left out rather than answered.
    .filter((r): r is typeof r & { provider: ProviderId } => isProviderId(r.provider ?? ''))
    .map((r) => ({ provider: r.provider, ...withRates(r.provider, r) }))
    .sort((a, b) => b.sent - a.sent || a.provider.localeCompare(b.provider));
}

/** Every local day of the range, in order, with one provider's figures (zeros on a day without any). */
export async function providerDaily(
  tenant: Tenant,
  ch: ClickHouseClient,
  provider: ProviderId,
  range: DashboardRange,
  f: DeliverabilityFilter,
): Promise<Array<{ date: string } & ProviderFigures>> {
  const rows = await countsBy(tenant, ch, range, { domain: f.domain, provider }, ['day']);
  const byDay = new Map(rows.map((r) => [r.day!, r]));
  return range.days.map((date) => {
    const { day: _day, ...counts } = byDay.get(date) ?? { ...zeroCounts() };
    return { date, ...withRates(provider, counts as Counts) };
  });
}
