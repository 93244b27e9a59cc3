import type { Client } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';

/** The reasons Cartero writes (spec: Restriction vocabulary; `unspecified` is never emitted). */
export const RESTRICTION_REASONS = ['unspecified', 'unsubscribe', 'soft_bounce', 'hard_bounce'] as const;
export type RestrictionReason = (typeof RESTRICTION_REASONS)[number];

export interface RestrictionRow {
  id: number;
  recipient: string;
  reason: string | null;
  scope: null;
  restricted_at: Date;
  deleted_at: Date | null;
  /** Beyond the spec: the reason of the bounce that caused it (engines/bounces/reason-names.ts); null when no bounce did. */
  bounce_reason: string | null;
  /** Beyond the spec: hard or soft, as that bounce was judged; null when no bounce did. */
  bounce_class: 'hard' | 'soft' | null;
}

/** The columns of a RestrictionRow, for every statement that returns one. */
export const RESTRICTION_COLUMNS = 'id, recipient, reason, NULL AS scope, restricted_at, deleted_at, bounce_reason, bounce_class';

/**
 * The bounce that caused a restriction (mail_bounces: its id, reason and class), kept on the row
 * (sql/migrations/024_restriction_bounce_reason.sql).
 */
export interface BounceCause {
  bounceId: string | number;
  reason: string | null;
  class: 'hard' | 'soft';
}

/** Restrictions are kept per address, compared case-insensitively (stored lower-case). */
export const restrictionAddress = (recipient: string): string => recipient.trim().toLowerCase();

/**
 * Put an address under restriction, in the caller's tenant transaction. An address has at most
 * one restriction in force (unique partial index): if one is already in force it is kept as it
 * is (its reason and date tell the first cause) and returned with created false. `cause`: the
 * bounce that made it, when one did.
 */
export async function restrict(
  tenant: Tenant,
  client: Client,
  recipient: string,
  reason: RestrictionReason,
  cause?: BounceCause,
): Promise<{ restriction: RestrictionRow; created: boolean }> {
  const address = restrictionAddress(recipient);
  const inserted = await client.query<RestrictionRow>(
    `INSERT INTO mail_restrictions (instance_id, recipient, reason, bounce_id, bounce_reason, bounce_class) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (instance_id, recipient) WHERE deleted_at IS NULL DO NOTHING
     RETURNING ${RESTRICTION_COLUMNS}`,
    [tenant.instanceId, address, reason, cause?.bounceId ?? null, cause?.reason ?? null, cause?.class ?? null],
  );
  if (inserted.rows[0]) return { restriction: inserted.rows[0], created: true };
  const current = await restrictionInForce(tenant, client, address);
  if (!current) throw new Error('restriction neither inserted nor found (concurrent lift?)');
  return { restriction: current, created: false };
}

/** The restriction in force on an address (at most one), in the caller's tenant transaction. */
export async function restrictionInForce(tenant: Tenant, client: Client, recipient: string): Promise<RestrictionRow | undefined> {
  const { rows } = await client.query<RestrictionRow>(
    `SELECT ${RESTRICTION_COLUMNS} FROM mail_restrictions
      WHERE instance_id = $1 AND recipient = $2 AND deleted_at IS NULL`,
    [tenant.instanceId, restrictionAddress(recipient)],
  );
  return rows[0];
}

/**
 * Lift the restriction in force on an address (sets deleted_at; the row stays as history, and an
 * unsubscribe event that caused it is not touched). `onlyReason` limits the lift to one cause: a
 * recipient resubscribing lifts their unsubscribe, never a hard bounce. Undefined when nothing
 * was in force (or not for that reason).
 */
export async function lift(
  tenant: Tenant,
  client: Client,
  recipient: string,
  onlyReason?: RestrictionReason,
): Promise<RestrictionRow | undefined> {
  const { rows } = await client.query<RestrictionRow>(
    `UPDATE mail_restrictions SET deleted_at = now()
      WHERE instance_id = $1 AND recipient = $2 AND deleted_at IS NULL AND ($3::text IS NULL OR reason = $3)
      RETURNING ${RESTRICTION_COLUMNS}`,
    [tenant.instanceId, restrictionAddress(recipient), onlyReason ?? null],
  );
  return rows[0];
}
