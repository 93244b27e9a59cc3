import type { DashboardRange } from '../../domain/panel/dashboard-range.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { chDateTime } from '../client.js';
import { DATETIME_PARAM, type Where } from '../activities/filters.js';
import type { CheckedQuery } from '../activities/rows.js';

/**
 * The 15-minute buckets the per-provider counts are kept in (analytics/migrations/010;
 * docs/deliverability.md, "How the figures stay fast"). Two sources, each bucketed by the time
 * its figures are counted by: 'received' (the mails mirror, by reception time) and 'events'
 * (complaints, unsubscribes and opens, by event time).
 */
export type CountSource = 'received' | 'events';
export const COUNT_SOURCES: readonly CountSource[] = ['received', 'events'];
export const BUCKET_MS = 15 * 60_000;

/** A bucket as ClickHouse's toString prints a DateTime('UTC') and reads it back: 'YYYY-MM-DD hh:mm:ss'. */
export type BucketText = string;
const BUCKETS_PARAM = `Array(DateTime('UTC'))`;

export const bucketSql = (timeColumn: string) => `toStartOfFifteenMinutes(${timeColumn})`;
const bucketTime = (b: BucketText) => new Date(`${b.replace(' ', 'T')}Z`);

/**
 * where, narrowed to some buckets of its time column: the bucket test itself, and the bounds of
 * the first and last bucket, which the primary key (instance_id, time, ...) can use.
 */
export function inBuckets(where: Where, timeColumn: string, buckets: readonly BucketText[]): Where {
  const times = buckets.map(bucketTime).map((d) => d.getTime());
  return {
    sql: `${where.sql} AND ${bucketSql(timeColumn)} IN {buckets:${BUCKETS_PARAM}}` +
      ` AND ${timeColumn} >= {bucket_lo:${DATETIME_PARAM}} AND ${timeColumn} < {bucket_hi:${DATETIME_PARAM}}`,
    params: {
      ...where.params,
      buckets,
      bucket_lo: chDateTime(new Date(Math.min(...times))),
      bucket_hi: chDateTime(new Date(Math.max(...times) + BUCKET_MS)),
    },
  };
}

/**
 * The buckets of one instance's range whose kept counts are missing or older than their rows:
 * rows arrived (count_marks) after the newest mark the kept counts include (`covered`). Those
 * are counted live; every other bucket is read from provider_counts. A bucket without marks has
 * no rows, so nothing to count. Ranges are whole local days, which begin on a bucket.
 */
export function staleBucketsQuery(tenant: Tenant, range: Pick<DashboardRange, 'from' | 'to'>): CheckedQuery {
  const scope = `instance_id = {instance_id:UInt64} AND bucket >= {from:${DATETIME_PARAM}} AND bucket < {to:${DATETIME_PARAM}}`;
  return {
    name: 'deliverability.stale_buckets',
    sql: `SELECT source, toString(bucket) AS at
      FROM (SELECT source, bucket, max(inserted_at) AS marked FROM count_marks WHERE ${scope} GROUP BY source, bucket) AS m
      LEFT JOIN (SELECT source, bucket, max(covered) AS covered FROM provider_counts WHERE ${scope} GROUP BY source, bucket) AS r
      USING (source, bucket)
      WHERE marked > covered
      ORDER BY source, at`,
    params: { instance_id: tenant.instanceId, from: chDateTime(range.from), to: chDateTime(range.to) },
    columns: [{ name: 'source', kind: 'text' }, { name: 'at', kind: 'text' }],
  };
}

/** staleBucketsQuery's rows by source. */
export function bySource(rows: ReadonlyArray<Record<string, unknown>>): Record<CountSource, BucketText[]> {
  const out: Record<CountSource, BucketText[]> = { received: [], events: [] };
  for (const r of rows) out[r.source as CountSource]?.push(String(r.at));
  return out;
}
