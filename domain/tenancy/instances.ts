import { IANAZone } from 'luxon';
import { AppError, NotFoundError } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';
import { normalizeCidr } from './ip.js';
import type { Tenant } from './context.js';

/** Instance administration (panel-only: reached through the CLI, never the public API). */
export interface Instance {
  id: number;
  slug: string;
  name: string;
  tz: string | null;
  enabled: boolean;
  allowed_cidrs: string[];
  send_rate_per_second: number | null;
  send_burst: number | null;
  monthly_quota: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, slug, name, tz, enabled, allowed_cidrs::text[] AS allowed_cidrs,
  send_rate_per_second, send_burst, monthly_quota, created_at, updated_at`;

export async function createInstance(pool: Pool, input: { slug: string; name?: string; tz?: string | null }): Promise<Instance> {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(input.slug)) {
    throw new AppError('invalid_slug', 'slug must be 1-63 lowercase letters, digits or dashes, starting with a letter or digit');
  }
  if (input.tz && !IANAZone.isValidZone(input.tz)) throw new AppError('invalid_time_zone', `unknown IANA time zone ${input.tz}`);
  const { rows } = await query<Instance>(
    pool,
    `INSERT INTO instances (slug, name, tz) VALUES ($1, $2, $3)
     ON CONFLICT (slug) DO NOTHING RETURNING ${COLUMNS}`,
    [input.slug, input.name ?? input.slug, input.tz ?? null],
  );
  if (!rows[0]) throw new AppError('instance_slug_taken', `an instance with slug ${input.slug} exists`);
  return rows[0];
}

export async function getInstanceBySlug(pool: Pool, slug: string): Promise<Instance> {
  const { rows } = await query<Instance>(pool, `SELECT ${COLUMNS} FROM instances WHERE slug = $1`, [slug]);
  if (!rows[0]) throw new NotFoundError('instance', slug);
  return rows[0];
}

export async function setInstanceEnabled(pool: Pool, slug: string, enabled: boolean): Promise<Instance> {
  const { rows } = await query<Instance>(
    pool,
    `UPDATE instances SET enabled = $2, updated_at = now() WHERE slug = $1 RETURNING ${COLUMNS}`,
    [slug, enabled],
  );
  if (!rows[0]) throw new NotFoundError('instance', slug);
  return rows[0];
}

/**
 * Sets an instance aside under a new slug, disabled (every request 403): its data stays (consent
 * events and mails are records to keep), and the old slug is free for a new instance. What
 * `cartero demo --reset` does with the previous demo.
 */
export async function retireInstance(pool: Pool, slug: string, newSlug: string): Promise<Instance> {
  const { rows } = await query<Instance>(
    pool,
    `UPDATE instances SET slug = $2, enabled = false, updated_at = now() WHERE slug = $1 RETURNING ${COLUMNS}`,
    [slug, newSlug],
  );
  if (!rows[0]) throw new NotFoundError('instance', slug);
  return rows[0];
}

/** Add CIDRs to the instance's allow list, or clear it (empty list: every address allowed). */
export async function setInstanceAllowList(pool: Pool, slug: string, change: { add?: string[]; clear?: boolean }): Promise<Instance> {
  const add = (change.add ?? []).map(normalizeCidr);
  const { rows } = await query<Instance>(
    pool,
    `UPDATE instances
        SET allowed_cidrs = ARRAY(SELECT DISTINCT c FROM unnest(CASE WHEN $2 THEN '{}'::cidr[] ELSE allowed_cidrs END || $3::cidr[]) AS c ORDER BY c),
            updated_at = now()
      WHERE slug = $1 RETURNING ${COLUMNS}`,
    [slug, change.clear ?? false, add],
  );
  if (!rows[0]) throw new NotFoundError('instance', slug);
  return rows[0];
}

/** The sending limits: the rate is mails per second (a fraction allowed); burst and quota count mails. */
export const SEND_LIMITS = {
  send_rate_per_second: { whole: false },
  send_burst: { whole: true },
  monthly_quota: { whole: true },
} as const;
export type SendLimit = keyof typeof SEND_LIMITS;

/** A value a limit can hold: a number of at least 0, whole where the limit counts mails. */
export function isSendLimitValue(limit: SendLimit, value: number): boolean {
  return Number.isFinite(value) && value >= 0 && (!SEND_LIMITS[limit].whole || Number.isInteger(value));
}

/** undefined: unchanged; null: no limit. */
export type SendLimitsChange = { [L in SendLimit]?: number | null };

/** Sending limits (panel-only): bandwidth bucket rate and burst, monthly plan quota. */
export async function setInstanceLimits(pool: Pool, slug: string, change: SendLimitsChange): Promise<Instance> {
  for (const limit of Object.keys(SEND_LIMITS) as SendLimit[]) {
    const value = change[limit];
    if (typeof value === 'number' && !isSendLimitValue(limit, value)) {
      throw new AppError('invalid_limit', `${limit} must be a ${SEND_LIMITS[limit].whole ? 'whole ' : ''}number of at least 0 (null for no limit)`);
    }
  }
  if (change.send_rate_per_second === 0) throw new AppError('invalid_limit', 'rate must be above 0 (use none for no limit)');
  if (change.send_burst === 0) throw new AppError('invalid_limit', 'burst must be at least 1');
  const { rows } = await query<Instance>(
    pool,
    `UPDATE instances SET
        send_rate_per_second = CASE WHEN $2 THEN $3::float8 ELSE send_rate_per_second END,
        send_burst = CASE WHEN $4 THEN $5::int ELSE send_burst END,
        monthly_quota = CASE WHEN $6 THEN $7::int ELSE monthly_quota END,
        updated_at = now()
      WHERE slug = $1 RETURNING ${COLUMNS}`,
    [
      slug,
      change.send_rate_per_second !== undefined, change.send_rate_per_second ?? null,
      change.send_burst !== undefined, change.send_burst ?? null,
      change.monthly_quota !== undefined, change.monthly_quota ?? null,
    ],
  );
  if (!rows[0]) throw new NotFoundError('instance', slug);
  return rows[0];
}

/** The tenants of these instance ids (workers get ids in their job data); unknown ids are absent. */
export async function loadTenants(pool: Pool, ids: number[]): Promise<Map<number, Tenant>> {
  const { rows } = await query<{ id: number; slug: string; tz: string | null }>(
    pool,
    'SELECT id, slug, tz FROM instances WHERE id = ANY ($1::bigint[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { instanceId: r.id, slug: r.slug, tz: r.tz }]));
}

/** The tenant of one instance id (a job's, a signed link's), or undefined when there is no such instance. */
export async function loadTenant(pool: Pool, id: number): Promise<Tenant | undefined> {
  return (await loadTenants(pool, [id])).get(id);
}
