import type { Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';
import { retentionStart } from './ids.js';

/**
 * Purge mails (and, by cascade, their logs) received before the 3-month online window, in
 * batches so a large backlog never holds long locks, then the messages left without mails.
 * Mail ids keep answering mail_outside_retention afterwards: their age is in the id.
 */
export async function purgeExpiredMails(pool: Pool, batch = 5_000): Promise<{ mails: number; messages: number }> {
  const cutoff = retentionStart();
  let mails = 0;
  for (;;) {
    const { rowCount } = await query(
      pool,
      `DELETE FROM mails WHERE id IN (SELECT id FROM mails WHERE received_at < $1 LIMIT $2)`,
      [cutoff, batch],
    );
    mails += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) break;
  }
  const { rowCount } = await query(
    pool,
    `DELETE FROM messages msg WHERE msg.created_at < $1
        AND NOT EXISTS (SELECT 1 FROM mails m WHERE m.instance_id = msg.instance_id AND m.message_id = msg.id)`,
    [cutoff],
  );
  return { mails, messages: rowCount ?? 0 };
}
