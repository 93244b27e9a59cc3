import { DateTime } from 'luxon';
import { ValidationFailed } from '../errors.js';
import { toUtcRange, type LocalDateFilter } from '../time/local-date-range.js';

/** The longest range the dashboard answers, in local days: the 3-month retention of mails and events. */
export const DASHBOARD_MAX_DAYS = 92;
/** The range when none is given: the last 30 local days, today included. */
export const DASHBOARD_DEFAULT_DAYS = 30;

/**
 * The dashboard's range, resolved: whole local days in one zone, as the activity listings take
 * them (start_date and end_date inclusive, tz else the instance's zone else UTC), so each day's
 * figures can be asked of a listing with start_date = end_date = that day and the same tz.
 */
export interface DashboardRange {
  start_date: string;
  end_date: string;
  tz: string;
  /** Half-open UTC bounds of the range, [from, to). */
  from: Date;
  to: Date;
  /** Every local date of the range, in order. */
  days: string[];
}

/**
 * Fills what is missing (end_date: today in the zone; start_date: end_date minus 29 days), then
 * converts with the listings' one conversion (toUtcRange: same 422s for a bad zone, a bad date,
 * an end before the start) and bounds the length (422 value_error.date_range past
 * DASHBOARD_MAX_DAYS: a longer range reaches past the retention and reads more than a page should).
 */
export function dashboardRange(filter: LocalDateFilter, instanceZone: string | null, now = new Date()): DashboardRange {
  // Checks the zone (and the dates given) before they are used to fill the others.
  // The canonical name (Intl's: `europe/madrid` → `Europe/Madrid`, `US/Eastern` → `America/New_York`):
  // luxon accepts any case, but the zone also reaches ClickHouse and Postgres, whose zone
  // databases are looked up by exact name.
  const zone = new Intl.DateTimeFormat('en-US', { timeZone: toUtcRange({ tz: filter.tz ?? null }, instanceZone).zone }).resolvedOptions().timeZone;
  const endDate = filter.end_date ?? DateTime.fromJSDate(now, { zone }).toISODate()!;
  const endDay = DateTime.fromISO(endDate, { zone });
  const startDate = filter.start_date ?? (endDay.isValid ? endDay.minus({ days: DASHBOARD_DEFAULT_DAYS - 1 }).toISODate()! : endDate);
  const utc = toUtcRange({ start_date: startDate, end_date: endDate, tz: zone }, instanceZone);
  const days: string[] = [];
  for (let d = DateTime.fromISO(startDate, { zone }); d.toISODate()! <= endDate; d = d.plus({ days: 1 })) {
    days.push(d.toISODate()!);
    if (days.length > DASHBOARD_MAX_DAYS) {
      throw new ValidationFailed([
        {
          pointer: '/end_date',
          code: 'value_error.date_range',
          message: `The range should span at most ${DASHBOARD_MAX_DAYS} days`,
          params: { max_days: DASHBOARD_MAX_DAYS },
        },
      ]);
    }
  }
  return { start_date: startDate, end_date: endDate, tz: zone, from: utc.from!, to: utc.to!, days };
}
