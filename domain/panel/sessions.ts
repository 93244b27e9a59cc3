import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { dummyHash, verifyPassword } from './passwords.js';
import type { PanelRole } from './roles.js';

/**
 * Panel sessions (docs/panel.md, Sessions). A token is `crtsess_` and 32 random bytes in
 * base64url: the prefix makes a leaked one recognisable (secret scanners, logs). Only its sha256
 * is stored, so the table alone logs nobody in. Expiry slides: each authenticated request moves
 * it to now() + the TTL (PANEL_SESSION_TTL_SECONDS), but never past created_at + the maximum age
 * (PANEL_SESSION_MAX_AGE_SECONDS): without that cap a token used often enough lived for ever, and
 * a stolen one with it (issue 37). A session ends when its user logs out, is disabled or gets a
 * new password (the row is deleted), when it is not used for the TTL, or at its maximum age.
 */
export const SESSION_PREFIX = 'crtsess_';
const TOKEN_SHAPE = /^crtsess_[A-Za-z0-9_-]{43}$/;

function hashSessionToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** How long a session lives: unused (sliding), and at most from its login (absolute). */
export interface SessionLifetime {
  ttlSeconds: number;
  maxAgeSeconds: number;
}

export interface SessionUser {
  id: number;
  email: string;
}

export type LoginOutcome = { kind: 'ok'; token: string; expires_at: string; user: SessionUser } | { kind: 'invalid' };

/**
 * Checks the password and opens a session. An unknown address, a wrong password and a disabled
 * user are one outcome, reached in comparable time: an unknown address is verified against a
 * dummy hash, a disabled user's password is verified before being refused.
 */
export async function login(pool: Pool, input: { email: string; password: string }, lifetime: SessionLifetime): Promise<LoginOutcome> {
  const { rows } = await query<{ id: string; email: string; password_hash: string; disabled: boolean }>(
    pool,
    'SELECT id, email, password_hash, disabled_at IS NOT NULL AS disabled FROM panel_users WHERE lower(email) = lower($1)',
    [input.email.trim()],
  );
  const user = rows[0];
  const matches = await verifyPassword(input.password, user?.password_hash ?? (await dummyHash()));
  if (!user || !matches || user.disabled) return { kind: 'invalid' };
  // The user's sessions that expired are of no use to anyone: each login sweeps its own.
  await query(pool, 'DELETE FROM panel_sessions WHERE user_id = $1 AND expires_at <= now()', [user.id]);
  const token = SESSION_PREFIX + randomBytes(32).toString('base64url');
  const created = await query<{ expires_at: Date }>(
    pool,
    `INSERT INTO panel_sessions (token_sha256, user_id, created_at, expires_at)
     VALUES ($1, $2, now(), now() + make_interval(secs => least($3::int, $4::int)))
     RETURNING expires_at`,
    [hashSessionToken(token), user.id, lifetime.ttlSeconds, lifetime.maxAgeSeconds],
  );
  return { kind: 'ok', token, expires_at: created.rows[0]!.expires_at.toISOString(), user: { id: Number(user.id), email: user.email } };
}

export interface Session {
  id: number;
  user: SessionUser;
  expiresAt: Date;
}

/** The instance named by X-Instance-Slug, as the session's user sees it: null when not a member (or no such instance). */
export interface Membership {
  tenant: Tenant;
  role: PanelRole;
  enabled: boolean;
}

export type SessionOutcome = { kind: 'unauthenticated' } | { kind: 'ok'; session: Session; membership: Membership | null };

interface SessionRow {
  id: string;
  user_id: string;
  email: string;
  expires_at: Date;
  instance_id: string | null;
  slug: string | null;
  tz: string | null;
  enabled: boolean | null;
  role: PanelRole | null;
}

/**
 * The session of a presented token, its expiry moved ahead (sliding, up to its maximum age), with
 * the user's membership of the instance `slug` names when one is given. One statement: the update
 * finds only a live session of an enabled user, and the membership is read in the same round trip.
 * A session past its maximum age is not found, as an expired one is (the same 401); the age is
 * checked against the configured maximum, not only the stored expiry, so lowering
 * PANEL_SESSION_MAX_AGE_SECONDS ends the sessions already older than it at once.
 */
export async function authenticateSession(pool: Pool, presented: string, slug: string | null, lifetime: SessionLifetime): Promise<SessionOutcome> {
  if (!TOKEN_SHAPE.test(presented)) return { kind: 'unauthenticated' };
  const { rows } = await query<SessionRow>(
    pool,
    `WITH s AS (
       UPDATE panel_sessions s
          SET last_seen_at = now(),
              expires_at = least(now() + make_interval(secs => $2), s.created_at + make_interval(secs => $4))
         FROM panel_users u
        WHERE s.token_sha256 = $1 AND s.expires_at > now() AND s.created_at + make_interval(secs => $4) > now()
          AND u.id = s.user_id AND u.disabled_at IS NULL
        RETURNING s.id, s.user_id, u.email, s.expires_at)
     SELECT s.id, s.user_id, s.email, s.expires_at, i.id AS instance_id, i.slug, i.tz, i.enabled, m.role
       FROM s
       LEFT JOIN panel_members m ON m.user_id = s.user_id AND $3::text IS NOT NULL
                                AND m.instance_id = (SELECT id FROM instances WHERE slug = $3)
       LEFT JOIN instances i ON i.id = m.instance_id`,
    [hashSessionToken(presented), lifetime.ttlSeconds, slug, lifetime.maxAgeSeconds],
    'panel-session-lookup',
  );
  const row = rows[0];
  if (!row) return { kind: 'unauthenticated' };
  const session = { id: Number(row.id), user: { id: Number(row.user_id), email: row.email }, expiresAt: row.expires_at };
  const membership =
    row.instance_id !== null && row.role !== null
      ? { tenant: { instanceId: Number(row.instance_id), slug: row.slug!, tz: row.tz }, role: row.role, enabled: row.enabled === true }
      : null;
  return { kind: 'ok', session, membership };
}

/** Ends a session (logout): its token is refused from now on. */
export async function endSession(pool: Pool, sessionId: number): Promise<void> {
  await query(pool, 'DELETE FROM panel_sessions WHERE id = $1', [sessionId]);
}
