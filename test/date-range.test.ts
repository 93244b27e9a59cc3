import t, { type Test } from 'tap';
import { ValidationFailed } from '../domain/errors.js';
import { toUtcRange, type LocalDateFilter } from '../domain/time/local-date-range.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant, type TestTenant } from './helpers/fixtures.js';
import { fixtureRoutes } from './helpers/fixture-routes.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The spec's local-date filters (start_date, end_date, tz) become half-open UTC bounds
 * [from, to): from is the first instant of start_date, to the first instant of the day after
 * end_date, both in tz, else the instance's zone, else UTC.
 *
 * DST facts used below (tzdata):
 * - Europe/Madrid 2026-03-29: 02:00 CET (+01) jumps to 03:00 CEST (+02): a 23-hour day.
 *   2026-10-25: 03:00 CEST falls back to 02:00 CET: a 25-hour day.
 * - America/Santiago 2026-09-06 (first Sunday of September): 00:00 -04 jumps to 01:00 -03, so
 *   local midnight does not exist; the day starts at 01:00 -03 = 04:00Z, and ends at the next
 *   midnight 00:00 -03 = 2026-09-07T03:00Z (23 hours).
 */

const dbs = await testDatabases(t, 'daterange');
const { url } = await startTestWeb(t, dbs, { extraRoutes: fixtureRoutes });
const utcTenant = await makeTenant(dbs.pool);
const madridTenant = await makeTenant(dbs.pool, { tz: 'Europe/Madrid' });
const santiagoTenant = await makeTenant(dbs.pool, { tz: 'America/Santiago' });

const HOUR = 3_600_000;

function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}

function range(filter: LocalDateFilter, instanceZone: string | null) {
  const r = toUtcRange(filter, instanceZone);
  return { from: iso(r.from), to: iso(r.to), zone: r.zone };
}

/** The field errors a call to toUtcRange throws. */
function failure(filter: LocalDateFilter, instanceZone: string | null): unknown {
  try {
    toUtcRange(filter, instanceZone);
  } catch (err) {
    if (err instanceof ValidationFailed) return err.errors.map((e) => [e.pointer, e.code]);
    throw err;
  }
  return 'no error';
}

async function viaHttp(tenant: TestTenant, query: string) {
  const res = await fetch(`${url}/v1/test-fixtures/date-range?${query}`, { headers: tenant.headers });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('toUtcRange', async (t) => {
  t.test('UTC when neither tz nor an instance zone is given', async (t) => {
    t.strictSame(range({ start_date: '2026-01-10', end_date: '2026-01-10' }, null), {
      from: '2026-01-10T00:00:00.000Z',
      to: '2026-01-11T00:00:00.000Z',
      zone: 'UTC',
    });
  });

  t.test('the instance zone when tz is omitted or null', async (t) => {
    const expected = { from: '2026-01-10T05:00:00.000Z', to: '2026-01-11T05:00:00.000Z', zone: 'America/New_York' };
    t.strictSame(range({ start_date: '2026-01-10', end_date: '2026-01-10' }, 'America/New_York'), expected);
    t.strictSame(range({ start_date: '2026-01-10', end_date: '2026-01-10', tz: null }, 'America/New_York'), expected);
  });

  t.test('an explicit tz overrides the instance zone', async (t) => {
    t.strictSame(range({ start_date: '2026-01-10', end_date: '2026-01-10', tz: 'Asia/Tokyo' }, 'America/New_York'), {
      from: '2026-01-09T15:00:00.000Z',
      to: '2026-01-10T15:00:00.000Z',
      zone: 'Asia/Tokyo',
    });
    t.strictSame(range({ start_date: '2026-01-10', tz: 'UTC' }, 'Europe/Madrid').from, '2026-01-10T00:00:00.000Z');
  });

  t.test('end_date is inclusive: the bound is the next local midnight', async (t) => {
    t.strictSame(range({ start_date: '2026-01-01', end_date: '2026-01-31' }, null).to, '2026-02-01T00:00:00.000Z');
    t.strictSame(range({ end_date: '2026-12-31', tz: 'Europe/Madrid' }, null).to, '2026-12-31T23:00:00.000Z');
    t.strictSame(range({ end_date: '2028-02-28' }, null).to, '2028-02-29T00:00:00.000Z', 'leap day follows');
  });

  t.test('either side stays open when its date is absent', async (t) => {
    t.strictSame(range({ start_date: '2026-05-01' }, null), { from: '2026-05-01T00:00:00.000Z', to: null, zone: 'UTC' });
    t.strictSame(range({ end_date: '2026-05-01' }, null), { from: null, to: '2026-05-02T00:00:00.000Z', zone: 'UTC' });
    t.strictSame(range({ start_date: null, end_date: null }, 'Europe/Madrid'), { from: null, to: null, zone: 'Europe/Madrid' });
  });

  t.test('Europe/Madrid spring forward: a 23-hour day', async (t) => {
    const r = toUtcRange({ start_date: '2026-03-29', end_date: '2026-03-29' }, 'Europe/Madrid');
    t.equal(iso(r.from), '2026-03-28T23:00:00.000Z', 'midnight CET (+01)');
    t.equal(iso(r.to), '2026-03-29T22:00:00.000Z', 'next midnight CEST (+02)');
    t.equal(r.to!.getTime() - r.from!.getTime(), 23 * HOUR);
  });

  t.test('Europe/Madrid fall back: a 25-hour day', async (t) => {
    const r = toUtcRange({ start_date: '2026-10-25', end_date: '2026-10-25' }, 'Europe/Madrid');
    t.equal(iso(r.from), '2026-10-24T22:00:00.000Z');
    t.equal(iso(r.to), '2026-10-25T23:00:00.000Z');
    t.equal(r.to!.getTime() - r.from!.getTime(), 25 * HOUR);
  });

  t.test('America/Santiago: a day whose midnight does not exist starts at its first instant', async (t) => {
    const r = toUtcRange({ start_date: '2026-09-06', end_date: '2026-09-06' }, 'America/Santiago');
    t.equal(iso(r.from), '2026-09-06T04:00:00.000Z', '01:00 -03, the first existing local time');
    t.equal(iso(r.to), '2026-09-07T03:00:00.000Z', 'midnight -03');
    t.equal(r.to!.getTime() - r.from!.getTime(), 23 * HOUR);
    // The day before ends exactly where this one starts: no gap, no overlap.
    t.equal(iso(toUtcRange({ end_date: '2026-09-05' }, 'America/Santiago').to), '2026-09-06T04:00:00.000Z');
    t.equal(iso(toUtcRange({ start_date: '2026-09-05' }, 'America/Santiago').from), '2026-09-05T04:00:00.000Z', 'midnight -04');
  });

  t.test('an invalid zone is a validation error at /tz', async (t) => {
    t.strictSame(failure({ start_date: '2026-01-10', tz: 'Mars/Olympus_Mons' }, null), [['/tz', 'value_error.timezone']]);
    t.strictSame(failure({ tz: 'not a zone' }, 'Europe/Madrid'), [['/tz', 'value_error.timezone']], 'even with no dates');
  });

  t.test('start_date after end_date is a validation error; the same day is one day', async (t) => {
    t.strictSame(failure({ start_date: '2026-03-02', end_date: '2026-03-01' }, null), [['/end_date', 'value_error.date_range']]);
    t.strictSame(range({ start_date: '2026-03-01', end_date: '2026-03-01' }, null), {
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-03-02T00:00:00.000Z',
      zone: 'UTC',
    });
  });
});

t.test('through HTTP (dateFilterQuery on a route, tenant zone from the instance)', async (t) => {
  async function expectRange(t: Test, tenant: TestTenant, query: string, expected: { from: string | null; to: string | null; zone: string }) {
    const res = await viaHttp(tenant, query);
    t.equal(res.status, 200, query);
    t.strictSame(res.body, expected, query);
  }
  // 2026-03-29, the day Madrid moves to summer time, in either zone.
  const utcDay = { from: '2026-03-29T00:00:00.000Z', to: '2026-03-30T00:00:00.000Z', zone: 'UTC' };
  const madridDay = { from: '2026-03-28T23:00:00.000Z', to: '2026-03-29T22:00:00.000Z', zone: 'Europe/Madrid' };

  t.test('UTC for an instance without a zone', async (t) => {
    await expectRange(t, utcTenant, 'start_date=2026-03-29&end_date=2026-03-29', utcDay);
  });

  t.test("the instance's zone when tz is omitted or empty", async (t) => {
    await expectRange(t, madridTenant, 'start_date=2026-03-29&end_date=2026-03-29', madridDay);
    await expectRange(t, madridTenant, 'start_date=2026-03-29&end_date=2026-03-29&tz=', madridDay);
  });

  t.test('an explicit tz overrides the instance zone (both ways)', async (t) => {
    await expectRange(t, utcTenant, 'start_date=2026-03-29&end_date=2026-03-29&tz=Europe/Madrid', madridDay);
    await expectRange(t, madridTenant, 'start_date=2026-03-29&end_date=2026-03-29&tz=UTC', utcDay);
  });

  t.test('end_date inclusive and open sides', async (t) => {
    await expectRange(t, utcTenant, 'end_date=2026-01-31', { from: null, to: '2026-02-01T00:00:00.000Z', zone: 'UTC' });
    await expectRange(t, utcTenant, '', { from: null, to: null, zone: 'UTC' });
  });

  t.test('the Santiago day without a midnight', async (t) => {
    await expectRange(t, santiagoTenant, 'start_date=2026-09-06&end_date=2026-09-06', {
      from: '2026-09-06T04:00:00.000Z',
      to: '2026-09-07T03:00:00.000Z',
      zone: 'America/Santiago',
    });
  });

  t.test('an invalid zone is 422 at /tz', async (t) => {
    const res = await viaHttp(utcTenant, 'start_date=2026-01-10&tz=Mars/Olympus_Mons');
    t.equal(res.status, 422);
    t.equal(res.body.code, 'validation_error');
    t.match(res.body.errors, [{ pointer: '/tz', code: 'value_error.timezone' }]);
    t.equal(res.body.errors.length, 1);
    const long = await viaHttp(utcTenant, `tz=${'A'.repeat(65)}`);
    t.equal(long.status, 422);
    t.match(long.body.errors, [{ pointer: '/tz', code: 'string_too_long' }]);
  });

  t.test('start_date after end_date is 422', async (t) => {
    const res = await viaHttp(madridTenant, 'start_date=2026-03-02&end_date=2026-03-01');
    t.equal(res.status, 422);
    t.strictSame(res.body.errors.map((e: any) => [e.pointer, e.code]), [['/end_date', 'value_error.date_range']]);
  });

  t.test('a date that does not exist or is not YYYY-MM-DD is 422 date_parsing', async (t) => {
    for (const [query, pointer] of [
      ['start_date=2026-02-30', '/start_date'],
      ['end_date=2026-13-01', '/end_date'],
      ['start_date=2026-3-1', '/start_date'],
      ['end_date=yesterday', '/end_date'],
      ['start_date=2026-03-01T00:00:00Z', '/start_date'],
    ] as const) {
      const res = await viaHttp(utcTenant, query);
      t.equal(res.status, 422, query);
      t.strictSame(res.body.errors?.map((e: any) => [e.pointer, e.code]), [[pointer, 'date_parsing']], query);
    }
  });
});
