import type { Client } from '../../sql/pool.js';

/**
 * Order per mail and webhook: a delivery about a mail is attempted only when no older delivery
 * of the same mail to the same webhook is pending (its chain's head). Deliveries without a mail
 * (restrictions, consent, forms, tests, manual retries) have no chain.
 *
 * Who enqueues a head: whoever creates deliveries (fan-out, replay) enqueues those that are
 * heads; whoever settles one (success, last failure, cancel) enqueues the next of its chain. Both
 * hold the webhook's row lock while doing so (creators FOR KEY SHARE, settlers FOR UPDATE), so one
 * of them always sees the other's rows: no delivery is left without a job.
 */
/**
 * SQL: whether delivery `d` waits behind an older pending delivery of its chain (false for one
 * without a mail). The one statement of the ordering rule, read by the fan-out's heads, the
 * attempt's begin and the sweep.
 */
export const WAITS_IN_CHAIN = `(d.mail_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM webhook_deliveries p
     WHERE p.webhook_id = d.webhook_id AND p.mail_id = d.mail_id AND p.status = 'pending' AND p.id < d.id))`;

export async function chainHeads(c: Client, deliveryIds: readonly number[]): Promise<number[]> {
  if (!deliveryIds.length) return [];
  const { rows } = await c.query<{ id: string }>({
    name: 'webhook_chain_heads',
    text: `SELECT d.id FROM webhook_deliveries d
            WHERE d.id = ANY($1::bigint[]) AND d.status = 'pending' AND NOT ${WAITS_IN_CHAIN}`,
    values: [deliveryIds],
  });
  return rows.map((r) => Number(r.id));
}

/** The next pending delivery of each chain, after settled ones (deliveries without a mail have none). */
export async function nextInChains(c: Client, webhookId: number, mailIds: ReadonlyArray<string | null>): Promise<number[]> {
  const mails = [...new Set(mailIds.filter((m): m is string => m !== null))];
  if (!mails.length) return [];
  const { rows } = await c.query<{ id: string }>({
    name: 'webhook_chain_next',
    text: `SELECT DISTINCT ON (mail_id) id FROM webhook_deliveries
            WHERE webhook_id = $1 AND mail_id = ANY($2::text[]) AND status = 'pending' ORDER BY mail_id, id`,
    values: [webhookId, mails],
  });
  return rows.map((r) => Number(r.id));
}
