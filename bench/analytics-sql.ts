/**
 * Prints the exact ClickHouse requests (SQL text, parameters, settings) that the activity
 * listings and exports send, for a fixed, broad set of inputs: every listing (sent, opens,
 * clicks, unopened), every group_by, exclude_machine on and off, each common filter alone and
 * together, date ranges in several zones, and several pages. No ClickHouse is needed: the
 * listings run against a recording client that answers no rows.
 *
 * Its use: a refactoring of analytics/activities/ must not change the SQL unless it means to.
 * Save the output before the change, run it again after, and compare byte for byte:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/analytics-sql.js > /tmp/analytics-sql-before.txt
 *   ... change the code ...
 *   npx tsc -p tsconfig.json && node dist/bench/analytics-sql.js | cmp - /tmp/analytics-sql-before.txt
 *
 * Only the public entry points are called (the routes' list* functions and the exports' *Query
 * functions), so the script runs unchanged on the code before and after a refactoring.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { clicksQuery, listClicks } from '../analytics/activities/clicks.js';
import { listOpens, opensCsvColumns, opensQuery } from '../analytics/activities/opens.js';
import { listSent, sentQuery } from '../analytics/activities/sent.js';
import { listUnopened, unopenedQuery } from '../analytics/activities/unopened.js';
import { exportRequest } from '../analytics/export/stream.js';
import type { ActivityQuery } from '../analytics/activities/query.js';
import type { Tenant } from '../domain/tenancy/context.js';

type Filter = Record<string, unknown>;

const out: string[] = [];
const print = (line: string) => out.push(line);

/** Parameters with sorted keys: their order carries no meaning. */
function sorted(o: Record<string, unknown> | undefined): string {
  if (!o) return '{}';
  return JSON.stringify(Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]])));
}

interface Recorded {
  query: string;
  query_params?: Record<string, unknown>;
  format?: string;
  clickhouse_settings?: Record<string, unknown>;
}

/** A ClickHouse client that records each query and answers no rows. */
function recorder(): { ch: ClickHouseClient; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const ch = {
    query: async (req: Recorded) => {
      calls.push(req);
      return { json: async () => [] };
    },
  } as unknown as ClickHouseClient;
  return { ch, calls };
}

function printRequest(r: Recorded): void {
  print(`settings: ${sorted(r.clickhouse_settings)}`);
  if (r.format) print(`format: ${r.format}`);
  print(`params: ${sorted(r.query_params)}`);
  print('sql:');
  print(r.query);
  print('');
}

// ---------------------------------------------------------------- inputs

const TENANTS: Tenant[] = [
  { instanceId: 42, slug: 'snapshot', tz: null },
  { instanceId: 7, slug: 'madrid', tz: 'Europe/Madrid' },
];

/** Each common filter alone, some together, and date ranges (zones, one side open). */
const COMMON: Filter[] = [
  {},
  { msg_id: '01JMSG0000000000000000000A' },
  { mail_id: '01JMAIL000000000000000000B' },
  { sender_id: 12 },
  { recipient: 'Ann.Lee@Example.COM' },
  { recipient: 'ann', recipient_operator: 'starts_with' },
  { recipient: 'ann@example.com', recipient_operator: 'eq' },
  { recipient_operator: 'starts_with' },
  { custom_msg_id: 'order-17' },
  { custom_group_code: 'campaign-07' },
  { subject: 'Spring SALE' },
  { start_date: '2026-11-01' },
  { end_date: '2026-11-30' },
  { start_date: '2026-11-01', end_date: '2026-11-30' },
  { start_date: '2026-03-29', end_date: '2026-03-29', tz: 'Europe/Madrid' },
  { start_date: '2026-09-06', end_date: '2026-09-06', tz: 'America/Santiago' },
  { start_date: '2026-11-01', end_date: '2026-11-30', sender_id: 3, subject: 'digest' },
  { start_date: '2026-11-01', end_date: '2026-11-30', custom_group_code: 'campaign-07', sender_id: 3 },
  {
    start_date: '2026-11-01',
    end_date: '2026-11-30',
    tz: 'Asia/Kolkata',
    msg_id: '01JMSG0000000000000000000A',
    mail_id: '01JMAIL000000000000000000B',
    sender_id: 5,
    recipient: 'Bob',
    recipient_operator: 'starts_with',
    custom_msg_id: 'order-9',
    custom_group_code: 'campaign-01',
    subject: "it's 50% off_now",
  },
];

const PAGES = [
  { page: 1, page_size: 20 },
  { page: 3, page_size: 100 },
];

const SENT_OWN: Filter[] = [{}, { status: 3 }, { status: 6 }, { opened: 'all' }, { opened: 'opened' }, { opened: 'unopened' }, { status: 3, opened: 'opened' }];

const GROUP_BY = ['none', 'mail_id', 'msg_id'] as const;

// ---------------------------------------------------------------- listings and exports

interface Shape {
  listing: string;
  filters: Filter[];
  list: (tenant: Tenant, ch: ClickHouseClient, f: never) => Promise<unknown>;
  query: (tenant: Tenant, f: never) => ActivityQuery;
  csvColumns?: (f: Filter) => readonly string[] | undefined;
}

const eventFilters: Filter[] = GROUP_BY.flatMap((group_by) =>
  [false, true].flatMap((exclude_machine) => COMMON.map((f) => ({ ...f, group_by, exclude_machine }))),
);
// The defaults as the route's validation leaves them out (group_by and exclude_machine omitted).
eventFilters.push({}, { custom_group_code: 'campaign-07' }, { subject: 'x' });

const SHAPES: Shape[] = [
  { listing: 'sent', filters: SENT_OWN.flatMap((own) => COMMON.map((f) => ({ ...f, ...own }))), list: listSent, query: sentQuery },
  {
    listing: 'opens',
    filters: eventFilters,
    list: listOpens,
    query: opensQuery,
    csvColumns: (f) => opensCsvColumns((f.group_by as (typeof GROUP_BY)[number] | undefined) ?? 'none'),
  },
  { listing: 'clicks', filters: eventFilters, list: listClicks, query: clicksQuery },
  { listing: 'unopened', filters: COMMON, list: listUnopened, query: unopenedQuery },
];

async function main(): Promise<void> {
  for (const shape of SHAPES) {
    for (const tenant of TENANTS) {
      for (const f of shape.filters) {
        for (const page of PAGES) {
          const { ch, calls } = recorder();
          await shape.list(tenant, ch, { ...f, ...page } as never);
          print(`=== listing ${shape.listing} tenant=${tenant.instanceId}/${tenant.tz} filter=${JSON.stringify(f)} page=${JSON.stringify(page)}: ${calls.length} request(s)`);
          for (const call of calls) printRequest(call);
        }
        const q = shape.query(tenant, f as never);
        print(`=== query ${shape.listing} tenant=${tenant.instanceId}/${tenant.tz} filter=${JSON.stringify(f)}`);
        print(`name: ${q.name}`);
        // Names and kinds: what the exports read (CSV header, formula guard, date rendering).
        print(`columns: ${JSON.stringify(q.columns.map(({ name, kind }) => ({ name, kind })))}`);
        for (const format of ['csv', 'json'] as const) {
          const names = format === 'csv' ? shape.csvColumns?.(f) : undefined;
          const r = exportRequest(q, format, names);
          print(`--- export ${format}`);
          printRequest({ query: r.query, query_params: r.query_params, clickhouse_settings: r.clickhouse_settings as Record<string, unknown> });
        }
      }
    }
  }
  process.stdout.write(out.join('\n') + '\n');
}

await main();
