import { randomBytes } from 'node:crypto';
import { query, type Pool } from '../../sql/pool.js';
import { checkReportTag, type ReportKeys } from './report-tag.js';

/**
 * The versioned keys of report tags (report-tag.ts), kept in service_secrets as
 * 'report_tag:<version>' and shared by every dyno. The first caller creates version 1 (INSERT
 * ... ON CONFLICT DO NOTHING, then read back, so concurrent first callers agree); `cartero
 * report-key rotate` adds the next version. Read as the service role: the tenant role cannot
 * read service_secrets.
 *
 * Cached per pool. A process keeps tagging with the key it loaded until it restarts; when it
 * meets a tag of a version it has not loaded it reloads (at most once per RELOAD_MS), so a
 * rotation done elsewhere never makes a genuine report fail.
 */
const RELOAD_MS = 10_000;
const cache = new WeakMap<Pool, { keys: Promise<ReportKeys>; reloadedAt: number }>();

export function reportKeys(pool: Pool): Promise<ReportKeys> {
  let entry = cache.get(pool);
  if (!entry) {
    entry = { keys: load(pool, true), reloadedAt: 0 };
    cache.set(pool, entry);
    // A failed read (Postgres down) is retried by the next caller rather than cached.
    entry.keys.catch(() => cache.delete(pool));
  }
  return entry.keys;
}

/** Whether `tag` was made for `mailId`, reloading the keys once if it names an unknown version. */
export async function verifyReportTag(pool: Pool, mailId: string, tag: string): Promise<boolean> {
  const verdict = checkReportTag(await reportKeys(pool), mailId, tag);
  if (verdict !== 'unknown_version') return verdict === 'valid';
  const entry = cache.get(pool);
  // Bounded, so a flood of made-up versions cannot turn every report into a Postgres read.
  if (entry && Date.now() - entry.reloadedAt >= RELOAD_MS) {
    const keys = load(pool, false);
    cache.set(pool, { keys, reloadedAt: Date.now() });
    keys.catch(() => cache.delete(pool));
    return checkReportTag(await reportKeys(pool), mailId, tag) === 'valid';
  }
  return false;
}

/** Adds the next key version (the CLI's `report-key rotate`); returns it. Older keys keep verifying. */
export async function rotateReportKey(pool: Pool): Promise<{ version: number; created_at: string }> {
  await load(pool, true);
  const { rows } = await query<{ version: number; created_at: Date }>(
    pool,
    `INSERT INTO service_secrets (name, value)
     SELECT 'report_tag:' || (coalesce(max(split_part(name, ':', 2)::int), 0) + 1), $1
       FROM service_secrets WHERE name LIKE 'report\\_tag:%'
     RETURNING split_part(name, ':', 2)::int AS version, created_at`,
    [newSecret()],
    'cartero_report_key_rotate',
  );
  cache.delete(pool);
  return { version: rows[0]!.version, created_at: rows[0]!.created_at.toISOString() };
}

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

async function load(pool: Pool, createFirst: boolean): Promise<ReportKeys> {
  if (createFirst) {
    await query(pool, `INSERT INTO service_secrets (name, value) VALUES ('report_tag:1', $1) ON CONFLICT (name) DO NOTHING`, [newSecret()], 'cartero_report_key_create');
  }
  const { rows } = await query<{ name: string; value: string }>(
    pool,
    `SELECT name, value FROM service_secrets WHERE name LIKE 'report\\_tag:%' OR name = 'report_tags_since'`,
    [],
    'cartero_report_keys',
  );
  const byVersion = new Map<number, string>();
  let taggedSince: Date | undefined;
  for (const r of rows) {
    if (r.name === 'report_tags_since') taggedSince = new Date(r.value);
    else byVersion.set(Number(r.name.slice('report_tag:'.length)), r.value);
  }
  const newest = Math.max(...byVersion.keys());
  if (!Number.isSafeInteger(newest) || newest < 1) throw new Error('service_secrets has no report_tag key after creating one');
  if (!taggedSince || Number.isNaN(taggedSince.getTime())) throw new Error('service_secrets has no report_tags_since (migration 010 not applied?)');
  return { current: { version: newest, secret: byVersion.get(newest)! }, byVersion, taggedSince };
}
