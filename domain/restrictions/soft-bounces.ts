import { withTenant, type Tenant } from '../tenancy/context.js';
import { query, type Pool } from '../../sql/pool.js';
import { restrict } from './restrictions.js';
import type { SoftBounceSettings } from '../../config/defaults.js';

/**
 * The soft-bounce threshold (spec: "accumulation of transient bounces, threshold configured by
 * the service is crossed -> in force, reason soft_bounce"). An address with `threshold` soft
 * bounces within the last `windowDays` days is restricted. Only bounces after the latest lift of
 * any restriction of the address count: a lifted address starts again from zero.
 *
 * Runs in the worker's threshold job (workers/jobs/soft-bounces.ts), never in the path that records a
 * bounce: every bounce row starts unevaluated, and this looks only at the addresses that have
 * unevaluated ones.
 */
// Claims a batch of unevaluated soft bounces. SKIP LOCKED: two evaluations of one instance at
// once (a sweep and a notification) take disjoint batches, and each counts every bounce of its
// addresses whatever its flag, so the last one to commit sees them all.
const CLAIM = `
WITH batch AS (
  SELECT id FROM mail_bounces
   WHERE instance_id = $1 AND class = 'soft' AND NOT evaluated
   ORDER BY id LIMIT $2
   FOR UPDATE SKIP LOCKED
)
UPDATE mail_bounces b SET evaluated = true FROM batch WHERE b.id = batch.id
RETURNING b.recipient`;

// The addresses at or over the threshold, each with the bounce that crossed it: the
// threshold-th of the bounces counted, in the order they came. The restriction keeps that
// bounce's id, reason and class (what integrators see as its cause).
const OVER_THRESHOLD = `
SELECT recipient, id AS bounce_id, reason, class
  FROM (SELECT b.recipient, b.id, b.reason, b.class,
               row_number() OVER (PARTITION BY b.recipient ORDER BY b.bounced_at, b.id) AS n
          FROM mail_bounces b
         WHERE b.instance_id = $1 AND b.class = 'soft' AND b.recipient = ANY ($2::text[])
           AND b.bounced_at > now() - make_interval(days => $3)
           AND b.bounced_at > coalesce(
                 (SELECT max(r.deleted_at) FROM mail_restrictions r
                   WHERE r.instance_id = $1 AND r.recipient = b.recipient AND r.deleted_at IS NOT NULL),
                 '-infinity')) counted
 WHERE n = $4
 ORDER BY recipient`;

export interface SoftBounceEvaluation {
  /** Bounce rows marked evaluated. */
  evaluated: number;
  /** Addresses restricted by this run (not those already under a restriction in force). */
  restricted: string[];
}

/**
 * Evaluates the instance's unevaluated soft bounces, `batchSize` at a time, each batch in its
 * own tenant transaction (claim, count, restrict, commit), until none is left.
 */
export async function evaluateSoftBounces(
  tenant: Tenant,
  pool: Pool,
  settings: SoftBounceSettings,
  batchSize = 1000,
): Promise<SoftBounceEvaluation> {
  const result: SoftBounceEvaluation = { evaluated: 0, restricted: [] };
  for (;;) {
    const claimed = await withTenant(pool, tenant, async (c) => {
      const { rows } = await c.query<{ recipient: string }>(CLAIM, [tenant.instanceId, batchSize]);
      if (!rows.length) return 0;
      const addresses = [...new Set(rows.map((r) => r.recipient))];
      const over = await c.query<{ recipient: string; bounce_id: string; reason: string | null; class: 'soft' }>(OVER_THRESHOLD, [
        tenant.instanceId,
        addresses,
        settings.windowDays,
        settings.threshold,
      ]);
      for (const { recipient, bounce_id, reason, class: cls } of over.rows) {
        // restrict() keeps a restriction already in force (its reason tells the first cause).
        const { created } = await restrict(tenant, c, recipient, 'soft_bounce', { bounceId: bounce_id, reason, class: cls });
        if (created) result.restricted.push(recipient);
      }
      return rows.length;
    });
    result.evaluated += claimed;
    if (claimed < batchSize) return result;
  }
}

/** Every instance with unevaluated soft bounces (a service-level read, for the sweep). */
export async function instancesWithPendingSoftBounces(pool: Pool): Promise<Tenant[]> {
  const { rows } = await query<{ id: number; slug: string; tz: string | null }>(
    pool,
    `SELECT i.id, i.slug, i.tz FROM instances i
      WHERE EXISTS (SELECT 1 FROM mail_bounces b WHERE b.instance_id = i.id AND b.class = 'soft' AND NOT b.evaluated)`,
  );
  return rows.map((r) => ({ instanceId: r.id, slug: r.slug, tz: r.tz }));
}
