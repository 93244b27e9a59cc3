import { createHash, randomBytes } from 'node:crypto';
import { AppError, RuleViolation } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';
import { getInstanceBySlug } from './instances.js';
import { normalizeCidr } from './ip.js';

/** Every scope the service knows; a key with an unknown scope is refused at creation. */
export const SCOPES = [
  'mail:read', 'mail:send',
  'templates:read', 'templates:write',
  'consent:read', 'consent:write',
  'dataset:read', 'dataset:write',
  'form:read', 'form:write',
  'senders:read', 'domains:read',
  'webhooks:read', 'webhooks:write',
] as const;

/** Keys are shown as <prefix>.<key_id>.<token>; only sha256(token) is stored. */
export const KEY_PREFIX = 'crt';

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export interface ParsedKey {
  keyId: string;
  token: string;
}

/** Split a presented key; undefined for anything not of the three-part form. */
export function parseKey(presented: string): ParsedKey | undefined {
  const m = /^([a-z]+)\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/.exec(presented);
  if (!m || m[1] !== KEY_PREFIX) return undefined;
  return { keyId: m[2]!, token: m[3]! };
}

export interface CreatedKey {
  key_id: string;
  key: string;
  instance: string;
  scopes: string[];
  allowed_cidrs: string[];
  expires_at: string | null;
}

export async function createApiKey(
  pool: Pool,
  input: { instanceSlug: string; scopes: string[]; allowCidrs?: string[]; expiresAt?: Date | null },
): Promise<CreatedKey> {
  const unknown = input.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new AppError('unknown_scope', `unknown scopes: ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  // A business rule of the spec (409), not a malformed request: the key is scoped and holds no scope.
  if (input.scopes.length === 0) throw new RuleViolation('api_key_scope_required', 'a scoped key needs at least one scope');
  if (input.expiresAt && Number.isNaN(input.expiresAt.getTime())) throw new AppError('invalid_expiry', 'expires-at is not a date-time');
  const instance = await getInstanceBySlug(pool, input.instanceSlug);
  const keyId = randomBytes(8).toString('hex');
  const token = randomBytes(32).toString('base64url');
  const cidrs = (input.allowCidrs ?? []).map(normalizeCidr);
  const { rows } = await query<{ allowed_cidrs: string[]; expires_at: Date | null }>(
    pool,
    `INSERT INTO api_keys (instance_id, key_id, token_sha256, scopes, allowed_cidrs, expires_at)
     VALUES ($1, $2, $3, $4, $5::cidr[], $6) RETURNING allowed_cidrs::text[] AS allowed_cidrs, expires_at`,
    [instance.id, keyId, hashToken(token), [...new Set(input.scopes)], cidrs, input.expiresAt ?? null],
  );
  return {
    key_id: keyId,
    key: `${KEY_PREFIX}.${keyId}.${token}`,
    instance: instance.slug,
    scopes: [...new Set(input.scopes)],
    allowed_cidrs: rows[0]!.allowed_cidrs,
    expires_at: rows[0]!.expires_at?.toISOString() ?? null,
  };
}

/**
 * Revoke a key. `instanceId` scopes it to one instance (the panel: a key of another instance is
 * api_key_not_found, as one that does not exist); the CLI, run by the operator, names any key.
 */
export async function revokeApiKey(pool: Pool, keyId: string, opts: { instanceId?: number } = {}): Promise<{ key_id: string; revoked_at: string }> {
  const { rows } = await query<{ revoked_at: Date }>(
    pool,
    'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE key_id = $1 AND ($2::bigint IS NULL OR instance_id = $2) RETURNING revoked_at',
    [keyId, opts.instanceId ?? null],
  );
  if (!rows[0]) throw new AppError('api_key_not_found', `api key ${keyId} not found`);
  return { key_id: keyId, revoked_at: rows[0].revoked_at.toISOString() };
}

/** A key as listed: everything but its secret (the token is never stored; its hash is never shown). */
export interface ListedKey {
  key_id: string;
  scopes: string[];
  allowed_cidrs: string[];
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

/** An instance's keys, newest first, revoked ones included (with revoked_at). */
export async function listApiKeys(pool: Pool, instanceId: number): Promise<ListedKey[]> {
  const { rows } = await query<{ key_id: string; scopes: string[]; allowed_cidrs: string[]; expires_at: Date | null; revoked_at: Date | null; created_at: Date }>(
    pool,
    `SELECT key_id, scopes, allowed_cidrs::text[] AS allowed_cidrs, expires_at, revoked_at, created_at
       FROM api_keys WHERE instance_id = $1 ORDER BY created_at DESC, id DESC`,
    [instanceId],
  );
  return rows.map((r) => ({
    key_id: r.key_id,
    scopes: r.scopes,
    allowed_cidrs: r.allowed_cidrs,
    expires_at: r.expires_at?.toISOString() ?? null,
    revoked_at: r.revoked_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
  }));
}
