import type { Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';

/**
 * Deletes the rows of a list's retired uploads (replaced by an overwrite, or of a deleted list).
 * Run as the service role after the change commits: tenant code deletes nothing (migration 009),
 * and the list already reads as if they were gone (only live uploads count). If this never runs
 * (the process died in between), the next upload or delete of the list does it.
 */
export async function purgeRetiredUploads(pool: Pool, listId: number): Promise<number> {
  const { rowCount } = await query(
    pool,
    `DELETE FROM list_rows WHERE upload_id IN (SELECT id FROM list_uploads WHERE list_id = $1 AND replaced_at IS NOT NULL)`,
    [listId],
  );
  return rowCount ?? 0;
}
