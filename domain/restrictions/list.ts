import type { Pool } from '../../sql/pool.js';
import type { Page, PageRequest } from '../pagination.js';
import { toPage, window } from '../pagination.js';
import { likeContains } from '../text.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { RESTRICTION_COLUMNS, type RestrictionReason, type RestrictionRow } from './restrictions.js';

export interface RestrictionFilter extends PageRequest {
  /** Partial, case-insensitive (addresses are stored lower-case). */
  recipient?: string;
  reason?: RestrictionReason;
  /** true: only in force (deleted_at null); false: only lifted; absent: all. */
  active?: boolean;
}

/**
 * GET /v1/mail-restrictions: the whole history of the instance, newest first, with no retention
 * cut (a restriction is the state of an address, not an event of a mail). total_items is null:
 * the history only grows, and a partial-address filter would make an exact count a full scan of
 * it on every page.
 */
export async function listRestrictions(tenant: Tenant, pool: Pool, f: RestrictionFilter): Promise<Page<RestrictionRow>> {
  const { limit, offset } = window(f);
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<RestrictionRow>({
      name: 'restrictions-page',
      text: `SELECT ${RESTRICTION_COLUMNS}
               FROM mail_restrictions
              WHERE instance_id = $1
                AND ($2::text IS NULL OR recipient ILIKE $2)
                AND ($3::text IS NULL OR reason = $3)
                AND ($4::boolean IS NULL OR (deleted_at IS NULL) = $4)
              ORDER BY restricted_at DESC, id DESC
              LIMIT $5 OFFSET $6`,
      values: [
        tenant.instanceId,
        f.recipient == null ? null : likeContains(f.recipient),
        f.reason ?? null,
        f.active ?? null,
        limit,
        offset,
      ],
    }),
  );
  return toPage(rows, f, null);
}
