import type { ClickHouseClient } from '@clickhouse/client';
import type { DashboardRange } from '../../domain/panel/dashboard-range.js';
import { readChecked } from '../activities/rows.js';
import { pumpInsert } from '../mail-events.js';
import type { BucketText, CountSource } from './buckets.js';
import { eventCountsQuery, mailCountsQuery, SOURCE_COUNTS } from './counts.js';

/**
 * Keeps provider_counts current (analytics/migrations/010; docs/deliverability.md, "How the
 * figures stay fast"): every bucket whose newest mark is later than its kept counts, and that has
 * been quiet for `graceMs`, is counted again with the live queries of counts.ts (grouped by
 * bucket, provider and sending domain) and its row replaced, `covered` = the newest mark seen
 * before counting.
 *
 * Why that is exact: a row is marked when its insert runs (now64() in the view), and visible a
 * moment later. A bucket is only counted once its newest mark is graceMs old, so every insert
 * marked up to then is visible to the count; any row that arrives afterwards carries a later
 * mark, so the bucket is stale again (read live by countsBy) until the next run counts it. A count
 * that also saw such a row is merely recounted. Two runs at once write the same rows.
 */
export interface RollupOptions {
  /** How long a bucket must have had no insert before it is counted (default ROLLUP_GRACE_MS). */
  graceMs?: number;
  /** Buckets counted per run at most; the rest wait for the next (default 20,000). */
  maxBuckets?: number;
}

export interface RollupRun {
  /** Buckets counted and replaced. */
  buckets: number;
  /** Stale buckets left for a later run (quiet ones past maxBuckets). */
  left: number;
}

/** An insert is visible within a minute of its mark, with room to spare (they take milliseconds). */
export const ROLLUP_GRACE_MS = 60_000;
// Buckets counted per query: each query reads their rows with FINAL.
const CHUNK = 500;

interface Stale {
  instance_id: number;
  source: CountSource;
  bucket: BucketText;
  marked: string;
}

// Where the last complete run left off (service_info, analytics/migrations/001).
const SINCE_KEY = 'deliverability.rollup.since';
// Read again each run: marks up to this much older than the last run's horizon, for inserts
// marked before it that showed late.
const SINCE_MARGIN_MS = 5 * 60_000;

/**
 * The quiet stale buckets of every instance, oldest first, among those marked after `since`:
 * any bucket that went stale since the last complete run has a mark after it, so the marks of all
 * time (96 buckets a day, per instance and source, for 3 months) are not grouped every minute.
 * The kept counts are looked up by their key for those buckets only.
 */
async function quietStale(ch: ClickHouseClient, graceMs: number, limit: number, since: string): Promise<Stale[]> {
  const recent = `SELECT instance_id, source, bucket, max(inserted_at) AS marked FROM count_marks
      WHERE inserted_at > {since:DateTime64(3, 'UTC')} GROUP BY instance_id, source, bucket`;
  const rows = await readChecked(ch, {
    name: 'deliverability.rollup_stale',
    sql: `SELECT instance_id, source, toString(bucket) AS at, toString(marked) AS marked_at
      FROM (${recent} HAVING marked < now64(3) - toIntervalMillisecond({grace:UInt32})) AS m
      LEFT JOIN (SELECT instance_id, source, bucket, max(covered) AS covered FROM provider_counts
                  WHERE (instance_id, source, bucket) IN (SELECT instance_id, source, bucket FROM (${recent}))
                  GROUP BY instance_id, source, bucket) AS r
      USING (instance_id, source, bucket)
      WHERE marked > covered
      ORDER BY bucket, instance_id, source
      LIMIT {limit:UInt32}`,
    params: { grace: graceMs, limit: limit + 1, since },
    columns: [
      { name: 'instance_id', kind: 'number' },
      { name: 'source', kind: 'text' },
      { name: 'at', kind: 'text' },
      { name: 'marked_at', kind: 'text' },
    ],
  });
  // Named apart from the columns they print: an alias named like a column would replace it in the query.
  return rows.map((r) => ({ instance_id: Number(r.instance_id), source: r.source as CountSource, bucket: String(r.at), marked: String(r.marked_at) }));
}

const EPOCH = '1970-01-01 00:00:00.000';

async function textValue(ch: ClickHouseClient, sql: string, params: Record<string, unknown> = {}): Promise<string | undefined> {
  const rows = await readChecked(ch, { name: 'deliverability.rollup_since', sql, params, columns: [{ name: 'value', kind: 'text' }] });
  return rows[0] === undefined ? undefined : String(rows[0].value);
}

/** The whole UTC days around some buckets: the bounds the live queries take, narrowed to the buckets themselves. */
function utcDays(buckets: readonly BucketText[]): DashboardRange {
  const first = buckets.reduce((a, b) => (a < b ? a : b)).slice(0, 10);
  const last = buckets.reduce((a, b) => (a > b ? a : b)).slice(0, 10);
  const from = new Date(`${first}T00:00:00Z`);
  const to = new Date(new Date(`${last}T00:00:00Z`).getTime() + 86_400_000);
  return { start_date: first, end_date: last, tz: 'UTC', from, to, days: [] };
}

/** Counts one instance's buckets of one source and replaces their rows (the source's count arrays filled, the others empty). */
async function recount(ch: ClickHouseClient, source: CountSource, instanceId: number, stale: readonly Stale[]): Promise<void> {
  const buckets = stale.map((s) => s.bucket);
  // The queries need the instance and a zone; the slug is not read.
  const tenant = { instanceId, slug: '', tz: 'UTC' };
  const query = source === 'received' ? mailCountsQuery : eventCountsQuery;
  const rows = await readChecked(ch, query(tenant, utcDays(buckets), {}, ['bucket', 'provider', 'domain'], buckets));
  const counts = SOURCE_COUNTS[source];
  const kept = new Map(stale.map((s) => [s.bucket, {
    instance_id: instanceId, source, bucket: s.bucket, covered: s.marked, provider: [] as string[], domain: [] as string[],
    ...Object.fromEntries(counts.map((n) => [n, [] as number[]])),
  } as Record<string, unknown> & { provider: string[]; domain: string[] }]));
  for (const r of rows) {
    const row = kept.get(String(r.bucket));
    if (!row) continue;
    row.provider.push(String(r.provider));
    row.domain.push(String(r.domain));
    for (const n of counts) (row[n] as number[]).push(Number(r[n] ?? 0));
  }
  await pumpInsert(ch, 'provider_counts', [...kept.values()], 'deliverability rollup');
}

/** One run: counts the quiet stale buckets, oldest first, up to maxBuckets. */
export async function rollUpProviderCounts(ch: ClickHouseClient, opts: RollupOptions = {}): Promise<RollupRun> {
  const maxBuckets = opts.maxBuckets ?? 20_000;
  const graceMs = opts.graceMs ?? ROLLUP_GRACE_MS;
  const since = (await textValue(ch, 'SELECT value FROM service_info FINAL WHERE key = {key:String}', { key: SINCE_KEY })) ?? EPOCH;
  // Taken before the marks are read: every bucket marked before it and not counted by this run is
  // not quiet yet, so its newest mark is later than this, and the next run finds it.
  const horizon = (await textValue(ch, 'SELECT toString(now64(3) - toIntervalMillisecond({back:UInt32})) AS value', { back: graceMs + SINCE_MARGIN_MS }))!;
  const stale = await quietStale(ch, graceMs, maxBuckets, since);
  const now = stale.slice(0, maxBuckets);
  const groups = new Map<string, Stale[]>();
  for (const s of now) {
    const id = `${s.instance_id}/${s.source}`;
    const group = groups.get(id);
    if (group) group.push(s);
    else groups.set(id, [s]);
  }
  for (const group of groups.values()) {
    for (let i = 0; i < group.length; i += CHUNK) {
      const chunk = group.slice(i, i + CHUNK);
      await recount(ch, chunk[0]!.source, chunk[0]!.instance_id, chunk);
    }
  }
  const left = stale.length - now.length;
  // Only a complete run moves the horizon on: buckets left over are looked for again from the same point.
  if (!left) await pumpInsert(ch, 'service_info', [{ key: SINCE_KEY, value: horizon, updated_at: horizon }], 'deliverability rollup');
  return { buckets: now.length, left };
}
