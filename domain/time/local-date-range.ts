import { DateTime, IANAZone } from 'luxon';
import { ValidationFailed } from '../errors.js';

export interface LocalDateFilter {
  start_date?: string | null;
  end_date?: string | null;
  tz?: string | null;
}

/** Half-open UTC bounds [from, to) of the local dates, either side open when its date is absent. */
export interface UtcRange {
  from: Date | null;
  to: Date | null;
  zone: string;
}

/**
 * The one conversion of the spec's local-date filters to UTC: start_date is the first local
 * instant of that day and end_date is inclusive (the bound is the start of the next local day),
 * in `tz`, else the instance's zone, else UTC. Midnight that does not exist (a DST jump at 00:00,
 * as in America/Santiago) resolves to the first instant of the day that does.
 */
export function toUtcRange(filter: LocalDateFilter, instanceZone: string | null): UtcRange {
  const zone = filter.tz ?? instanceZone ?? 'UTC';
  if (!IANAZone.isValidZone(zone)) {
    throw new ValidationFailed([
      { pointer: '/tz', code: 'value_error.timezone', message: 'Input should be an IANA time zone name', params: { value: zone } },
    ]);
  }
  const startOfDay = (date: string, pointer: string) => {
    const day = DateTime.fromISO(date, { zone });
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !day.isValid) {
      throw new ValidationFailed([{ pointer, code: 'date_parsing', message: 'Input should be a valid date (YYYY-MM-DD)' }]);
    }
    return day.startOf('day');
  };
  const from = filter.start_date ? startOfDay(filter.start_date, '/start_date') : null;
  const to = filter.end_date ? startOfDay(filter.end_date, '/end_date').plus({ days: 1 }).startOf('day') : null;
  if (from && to && from >= to) {
    throw new ValidationFailed([
      { pointer: '/end_date', code: 'value_error.date_range', message: 'end_date should not be before start_date' },
    ]);
  }
  return { from: from?.toUTC().toJSDate() ?? null, to: to?.toUTC().toJSDate() ?? null, zone };
}
