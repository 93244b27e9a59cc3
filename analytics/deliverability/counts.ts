import type { ClickHouseClient } from '@clickhouse/client';
import type { DashboardRange } from '../../domain/panel/dashboard-range.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { activityWhere, type Where } from '../activities/filters.js';
import type { ResultColumn } from '../activities/query.js';
import { readChecked, type CheckedQuery } from '../activities/rows.js';
import { bucketSql, bySource, inBuckets, staleBucketsQuery, type BucketText, type CountSource } from './buckets.js';

/**
 * The per-provider counts (docs/deliverability.md, "Figures"), each read where and as its listing
 * reads it, so every figure equals what a listing counts for the same range:
 *
 *  - sent, delivered, deferred, bounced (hard, soft): the `mails` mirror, each mail's newest
 *    snapshot (FINAL), by reception time: the rows of GET /v1/activities/sent, with status=3, 5
 *    and 6 (bounced split by bounce_class, as the dashboard does);
 *  - complaints, unsubscribed, opened, opened_human: `mail_events`, each event once (its copies share
 *    event_id), by the event's time: the complaints of GET /v1/mail-complaints, the mails'
 *    unsubscribes, and total_items of GET /v1/activities/opens, without and with exclude_machine=true.
 *
 * Grouped by any of: the mail's provider (a column of both tables since analytics migration
 * 009), the local day of the time column, and the sending domain (the part after the sender
 * address's @). The same date bounds as the listings (activityWhere).
 *
 * Kept per 15-minute bucket (provider_counts, refreshed every minute by rollup.ts): countsBy
 * reads the kept counts of every bucket whose rows have not changed since they were counted, and
 * counts the others live with the queries below (docs/deliverability.md, "How the figures stay
 * fast"). Both give the same numbers: the kept ones are these queries' own, per bucket.
 */
export type CountKey = 'provider' | 'day' | 'domain' | 'bucket';

export interface CountsFilter {
  /** One sending domain (lower case), or all. */
  domain?: string;
  /** One provider, or all. */
  provider?: string;
}

export interface Counts {
  sent: number;
  delivered: number;
  deferred: number;
  bounced_hard: number;
  bounced_soft: number;
  complaints: number;
  unsubscribed: number;
  /** Every open, and those not flagged as machine-made: shown side by side, as elsewhere. */
  opened: number;
  opened_human: number;
}

export type KeyedCounts = Partial<Record<CountKey, string>> & Counts;

export const zeroCounts = (): Counts => ({
  sent: 0, delivered: 0, deferred: 0, bounced_hard: 0, bounced_soft: 0, complaints: 0, unsubscribed: 0, opened: 0, opened_human: 0,
});

// The sender's domain: `sender` is the sender's address, stored lower case (senders.email_address).
const SENDER_DOMAIN = `substring(assumeNotNull(sender), position(assumeNotNull(sender), '@') + 1)`;

function keySql(key: CountKey, timeColumn: string): string {
  if (key === 'provider') return 'provider';
  if (key === 'day') return `toString(toDate(${timeColumn}, {tz:String}))`;
  if (key === 'bucket') return `toString(${bucketSql(timeColumn)})`;
  return SENDER_DOMAIN;
}

function narrowed(where: Where, f: CountsFilter): Where {
  const conditions = [where.sql];
  const params = { ...where.params };
  if (f.domain !== undefined) {
    conditions.push('endsWith(sender, {sender_at:String})');
    params.sender_at = `@${f.domain.toLowerCase()}`;
  }
  if (f.provider !== undefined) {
    conditions.push('provider = {provider:String}');
    params.provider = f.provider;
  }
  return { sql: conditions.join(' AND '), params };
}


const numbers = (...names: string[]): ResultColumn[] => names.map((name) => ({ name, kind: 'number' }));
const texts = (keys: readonly CountKey[]): ResultColumn[] => keys.map((name) => ({ name, kind: 'text' }));

/** The range's where on a time column, or only some of its buckets'. */
function rangeWhere(tenant: Tenant, range: DashboardRange, timeColumn: 'received_at' | 'occurred_at', buckets?: readonly BucketText[]): Where {
  const where = activityWhere(tenant, range, timeColumn);
  return buckets ? inBuckets(where, timeColumn, buckets) : where;
}

export function mailCountsQuery(tenant: Tenant, range: DashboardRange, f: CountsFilter, keys: readonly CountKey[], buckets?: readonly BucketText[]): CheckedQuery {
  const where = narrowed(rangeWhere(tenant, range, 'received_at', buckets), f);
  const select = keys.map((k) => `${keySql(k, 'received_at')} AS ${k}`);
  return {
    name: 'deliverability.mails',
    sql: `SELECT ${[...select,
      'toUInt32(count()) AS sent',
      'toUInt32(countIf(status = 3)) AS delivered',
      'toUInt32(countIf(status = 5)) AS deferred',
      `toUInt32(countIf(status = 6 AND bounce_class = 'hard')) AS bounced_hard`,
      `toUInt32(countIf(status = 6 AND bounce_class != 'hard')) AS bounced_soft`].join(', ')}
    FROM mails FINAL WHERE ${where.sql}${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`,
    params: { ...where.params, tz: range.tz },
    columns: [...texts(keys), ...numbers('sent', 'delivered', 'deferred', 'bounced_hard', 'bounced_soft')],
  };
}

/**
 * Complaints, unsubscribes and human opens: each event once, read with FINAL, which keeps each
 * event's newest copy (the copies a re-shipped batch leaves share the whole sorting key,
 * occurred_at and event_id included; the highest shipped_at wins): an open is human when that
 * copy carries no machine flag, as the opens listing's count reads it (event-rows.ts). The keys
 * are the same on every copy (provider and sender are the mail's, fixed at acceptance;
 * occurred_at is in the key). Three ranges of the key (instance, type, time).
 *
 * FINAL, not `GROUP BY event_type, event_id` with argMax(machine, shipped_at) as before: the same
 * rows (checked on bench/analytics's 10 M mails, 5.5 M opens), but a merge of sorted ranges
 * instead of a hash table of every event: 0.6 s and 21 MiB against 22.7 s and 1.5 GiB there
 * (docs/performance-history.md, issue 40).
 */
export function eventCountsQuery(tenant: Tenant, range: DashboardRange, f: CountsFilter, keys: readonly CountKey[], buckets?: readonly BucketText[]): CheckedQuery {
  const where = narrowed(rangeWhere(tenant, range, 'occurred_at', buckets), f);
  return {
    name: 'deliverability.events',
    sql: `SELECT ${[...keys.map((k) => `${keySql(k, 'occurred_at')} AS ${k}`),
      `toUInt32(countIf(event_type = 'complaint')) AS complaints`,
      `toUInt32(countIf(event_type = 'unsubscribe')) AS unsubscribed`,
      `toUInt32(countIf(event_type = 'open')) AS opened`,
      `toUInt32(countIf(event_type = 'open' AND machine = '')) AS opened_human`].join(', ')}
    FROM mail_events FINAL WHERE ${where.sql} AND event_type IN ('complaint', 'unsubscribe', 'open')${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`,
    params: { ...where.params, tz: range.tz },
    columns: [...texts(keys), ...numbers('complaints', 'unsubscribed', 'opened', 'opened_human')],
  };
}

const COUNT_NAMES = Object.keys(zeroCounts()) as Array<keyof Counts>;
/** The counts each source keeps (its row's other count arrays are empty). */
export const SOURCE_COUNTS: Record<CountSource, ReadonlyArray<keyof Counts>> = {
  received: ['sent', 'delivered', 'deferred', 'bounced_hard', 'bounced_soft'],
  events: ['complaints', 'unsubscribed', 'opened', 'opened_human'],
};

/**
 * One source's kept counts of the range's buckets, but for the stale ones (counted live
 * instead), summed per combination of the keys: the arrays of each bucket's row side by side
 * (ARRAY JOIN), the newest row of each bucket (FINAL). A day is the local day its bucket begins in.
 */
export function keptCountsQuery(
  tenant: Tenant,
  range: DashboardRange,
  f: CountsFilter,
  keys: readonly CountKey[],
  source: CountSource,
  stale: readonly BucketText[],
): CheckedQuery {
  const conditions = [
    'instance_id = {instance_id:UInt64}',
    'source = {source:String}',
    `bucket >= {from:DateTime64(3, 'UTC')}`,
    `bucket < {to:DateTime64(3, 'UTC')}`,
    `bucket NOT IN {stale:Array(DateTime('UTC'))}`,
  ];
  const params: Record<string, unknown> = { ...activityWhere(tenant, range, 'received_at').params, source, stale, tz: range.tz };
  // The arrays' elements are named each_* and summed outside the subquery: beside a result
  // column of the same name ClickHouse reads the array itself.
  if (f.domain !== undefined) {
    conditions.push('each_domain = {domain:String}');
    params.domain = f.domain.toLowerCase();
  }
  if (f.provider !== undefined) {
    conditions.push('each_provider = {provider:String}');
    params.provider = f.provider;
  }
  const counts = SOURCE_COUNTS[source];
  const keyOf = (k: CountKey) => (k === 'day' ? `toString(toDate(bucket, {tz:String}))` : k === 'bucket' ? 'toString(bucket)' : `each_${k}`);
  const each = ['provider', 'domain', ...counts];
  return {
    name: `deliverability.kept_${source}`,
    sql: `SELECT ${[...keys.map((k) => `${keyOf(k)} AS ${k}`), ...counts.map((n) => `toUInt32(sum(each_${n})) AS ${n}`)].join(', ')}
    FROM (SELECT bucket, ${each.map((n) => `each_${n}`).join(', ')}
            FROM provider_counts FINAL ARRAY JOIN ${each.map((n) => `${n} AS each_${n}`).join(', ')}
           WHERE ${conditions.join(' AND ')})${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`,
    params,
    columns: [...texts(keys), ...numbers(...counts)],
  };
}

/**
 * The counts of the range, one entry per combination of the keys that has any: the kept counts
 * of the buckets that have not changed since they were counted, plus the others counted live,
 * side by side.
 */
export async function countsBy(
  tenant: Tenant,
  ch: ClickHouseClient,
  range: DashboardRange,
  f: CountsFilter,
  keys: readonly CountKey[],
): Promise<KeyedCounts[]> {
  const stale = bySource(await readChecked(ch, staleBucketsQuery(tenant, range)));
  const parts = await Promise.all([
    readChecked(ch, keptCountsQuery(tenant, range, f, keys, 'received', stale.received)),
    readChecked(ch, keptCountsQuery(tenant, range, f, keys, 'events', stale.events)),
    stale.received.length ? readChecked(ch, mailCountsQuery(tenant, range, f, keys, stale.received)) : [],
    stale.events.length ? readChecked(ch, eventCountsQuery(tenant, range, f, keys, stale.events)) : [],
  ]);
  return sumByKeys(keys, parts.flat());
}

/** Rows of any of the queries above, summed per combination of the keys. */
export function sumByKeys(keys: readonly CountKey[], rows: ReadonlyArray<Record<string, unknown>>): KeyedCounts[] {
  const merged = new Map<string, KeyedCounts>();
  for (const row of rows) {
    const id = JSON.stringify(keys.map((k) => row[k]));
    let e = merged.get(id);
    if (!e) merged.set(id, (e = { ...Object.fromEntries(keys.map((k) => [k, String(row[k])])), ...zeroCounts() }));
    for (const name of COUNT_NAMES) if (row[name] !== undefined) e[name] += Number(row[name]);
  }
  return [...merged.values()];
}
