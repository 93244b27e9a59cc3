import type { Client, Pool } from '../../sql/pool.js';
import { RENDER_LIMITS, type RenderLimits } from '../../config/defaults.js';
import { AppError } from '../errors.js';
import { requestHash } from '../idempotency-key.js';
import type { JobQueue } from '../job-queue.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { acceptSend, type AcceptanceClaim, type SendAccepted, type SendRequest } from './accept.js';

/**
 * A send accepted once per key (issue 41, docs/sending.md "Idempotency"), for both doors:
 *  - 'api': POST /v1/mails/send's Idempotency-Key. The same validated request under a key
 *    accepted in the last 24 hours answers the first 202 again; another request is 422
 *    idempotency_key_reused.
 *  - 'smtp': a submitted message's Message-ID. A Message-ID accepted in the last 24 hours answers
 *    the first msg_id, whatever the message: a client that lost the reply sends the same one.
 * The key is the instance's (not the sender's nor the template's), and it is looked up before
 * anything else, so a retry after its sender or template changed still answers as the first
 * call did. It is written in the acceptance's own transaction (sql/migrations/034), so a key
 * exists iff its send committed; two calls at once with one key end in one send, the other
 * answering as a retry (or 422) once the first committed.
 */

export type SendDoor = 'api' | 'smtp';

/**
 * Whose key: 'api' an Idempotency-Key (1-255 characters, checked by the route:
 * api/http/idempotency-key.ts), 'smtp' a Message-ID as the message gives it (up to RFC 5322's
 * 998 characters). The table's CHECK holds both bounds.
 */
export interface SendKey {
  door: SendDoor;
  key: string;
}

export interface SendOnce {
  accepted: SendAccepted;
  /** The answer of an earlier send under the key: nothing was written or sent now. */
  replayed: boolean;
}

/** How long a key is remembered; the nightly retention job deletes older ones. */
export const SEND_KEY_HOURS = 24;

interface Stored {
  request_hash: string;
  response: SendAccepted;
}

async function findKey(tenant: Tenant, pool: Pool, key: SendKey): Promise<Stored | undefined> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Stored>({
      name: 'send-key-find',
      text: `SELECT request_hash, response FROM send_idempotency_keys
              WHERE instance_id = $1 AND door = $2 AND key = $3 AND response IS NOT NULL
                AND created_at > now() - $4 * interval '1 hour'`,
      values: [tenant.instanceId, key.door, key.key, SEND_KEY_HOURS],
    }),
  );
  return rows[0];
}

function replay(found: Stored, key: SendKey, hash: string): SendOnce {
  if (key.door === 'api' && found.request_hash !== hash) {
    throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different send: resend with a new key', { errors: [] });
  }
  return { accepted: found.response, replayed: true };
}

/** Another transaction holds the key, live: this one rolls back and answers as a retry. */
class KeyTaken extends Error {}

/**
 * The key as a claim of the acceptance's transaction. A row past the window is taken over (its
 * send is forgotten); a live one, committed or still being written by a concurrent call (the
 * insert waits for that one's end), is not.
 */
function keyClaim(tenant: Tenant, key: SendKey, hash: string): AcceptanceClaim {
  let id: string | undefined;
  return {
    async take(c: Client) {
      const { rows } = await c.query<{ id: string }>({
        name: 'send-key-claim',
        text: `INSERT INTO send_idempotency_keys (instance_id, door, key, request_hash) VALUES ($1, $2, $3, $4)
               ON CONFLICT ON CONSTRAINT send_idempotency_keys_key
               DO UPDATE SET request_hash = EXCLUDED.request_hash, response = NULL, created_at = now()
                       WHERE send_idempotency_keys.created_at <= now() - $5 * interval '1 hour'
               RETURNING id`,
        values: [tenant.instanceId, key.door, key.key, hash, SEND_KEY_HOURS],
      });
      if (!rows[0]) throw new KeyTaken();
      id = rows[0].id;
    },
    async settle(c: Client, accepted: SendAccepted) {
      await c.query({
        name: 'send-key-settle',
        text: 'UPDATE send_idempotency_keys SET response = $3 WHERE instance_id = $1 AND id = $2',
        values: [tenant.instanceId, id, JSON.stringify(accepted)],
      });
    },
  };
}

/**
 * acceptSend under a key: the first answer again when the key was accepted in the last 24
 * hours (replayed: true, nothing written), else a new send that records the key.
 */
export async function acceptSendOnce(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  req: SendRequest,
  key: SendKey,
  limits: Pick<RenderLimits, 'maxBodyBytes'> = RENDER_LIMITS,
): Promise<SendOnce> {
  const hash = requestHash(req);
  // Twice at most: a claim lost to a send that committed finds that send the second time.
  for (let attempt = 0; ; attempt++) {
    const found = await findKey(tenant, pool, key);
    if (found) return replay(found, key, hash);
    try {
      return { accepted: await acceptSend(tenant, pool, queue, req, limits, keyClaim(tenant, key, hash)), replayed: false };
    } catch (err) {
      if (!(err instanceof KeyTaken) || attempt > 0) throw err;
    }
  }
}

/** Keys past the window (retention job, nightly): a key is only ever answered within it. */
export async function purgeSendKeys(pool: Pool): Promise<number> {
  const r = await pool.query(`DELETE FROM send_idempotency_keys WHERE created_at <= now() - $1 * interval '1 hour'`, [SEND_KEY_HOURS]);
  return r.rowCount ?? 0;
}
