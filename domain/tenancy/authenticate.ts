import { timingSafeEqual } from 'node:crypto';
import type { Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';
import { hashToken, parseKey } from './api-keys.js';
import type { Tenant } from './context.js';

export type AuthOutcome =
  | { kind: 'unauthenticated' }
  | { kind: 'forbidden' }
  | { kind: 'ip_not_allowed' }
  | { kind: 'ok'; tenant: Tenant; keyId: string; scopes: string[] };

interface KeyRow {
  token_sha256: Buffer;
  scopes: string[];
  revoked: boolean;
  expired: boolean;
  instance_id: number;
  slug: string;
  tz: string | null;
  enabled: boolean;
  instance_ip_ok: boolean | null;
  key_ip_ok: boolean | null;
}

/**
 * The spec's authentication rules in their order: (1-3) anything wrong with the credentials or
 * the slug is one indistinguishable "unauthenticated"; (4) disabled instance or missing scope is
 * "forbidden"; (5) only then the two IP allow lists, without saying which refused. The allow lists
 * are matched in SQL against cidr[] (an empty list allows every address).
 */
export async function authenticate(
  pool: Pool,
  request: { authorization: string | undefined; slug: string | undefined; ip: string | null; scope: string | null },
): Promise<AuthOutcome> {
  // Auth scheme names are case-insensitive (RFC 9110 §11.1).
  const bearer = /^Bearer ([^\s]+)$/i.exec(request.authorization ?? '');
  return authenticateKey(pool, { key: bearer?.[1], slug: request.slug, ip: request.ip, scope: request.scope });
}

/**
 * The same rules for a key given by other means than an Authorization header: the submission
 * listener's AUTH (smtp/submission/), whose password is the key and user name the slug.
 */
export async function authenticateKey(
  pool: Pool,
  request: { key: string | undefined; slug: string | undefined; ip: string | null; scope: string | null },
): Promise<AuthOutcome> {
  const parsed = request.key ? parseKey(request.key) : undefined;
  if (!parsed || !request.slug) return { kind: 'unauthenticated' };

  const { rows } = await query<KeyRow>(
    pool,
    `SELECT k.token_sha256, k.scopes,
            k.revoked_at IS NOT NULL AS revoked,
            coalesce(k.expires_at <= now(), false) AS expired,
            i.id AS instance_id, i.slug, i.tz, i.enabled,
            cardinality(i.allowed_cidrs) = 0 OR $3::inet <<= ANY (i.allowed_cidrs) AS instance_ip_ok,
            cardinality(k.allowed_cidrs) = 0 OR $3::inet <<= ANY (k.allowed_cidrs) AS key_ip_ok
       FROM api_keys k JOIN instances i ON i.id = k.instance_id
      WHERE k.key_id = $1 AND i.slug = $2`,
    [parsed.keyId, request.slug, request.ip],
    'auth-key-lookup',
  );
  const row = rows[0];
  if (!row || row.revoked || row.expired || !timingSafeEqual(row.token_sha256, hashToken(parsed.token))) {
    return { kind: 'unauthenticated' };
  }
  if (!row.enabled || (request.scope !== null && !row.scopes.includes(request.scope))) return { kind: 'forbidden' };
  if (!row.instance_ip_ok || !row.key_ip_ok) return { kind: 'ip_not_allowed' };
  return {
    kind: 'ok',
    tenant: { instanceId: row.instance_id, slug: row.slug, tz: row.tz },
    keyId: parsed.keyId,
    scopes: row.scopes,
  };
}
