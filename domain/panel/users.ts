import { AppError, NotFoundError } from '../errors.js';
import type { Client, Pool } from '../../sql/pool.js';
import { query, withTransaction } from '../../sql/pool.js';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';

/**
 * Panel users (docs/panel.md): made and managed with the CLI (`cartero user ...`), never through
 * the API. An address is one user whatever its case; the password hash never leaves this module's
 * queries except to the login's verification (sessions.ts).
 */
export interface PanelUser {
  id: number;
  email: string;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

interface UserRow {
  id: string;
  email: string;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, email, disabled_at, created_at, updated_at';

function toUser(r: UserRow): PanelUser {
  return {
    id: Number(r.id),
    email: r.email,
    disabled_at: r.disabled_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/**
 * The password a file holds: its text without one final line break (editors and `echo` add one),
 * checked for length. A password is never trimmed otherwise: spaces are characters of it.
 */
export function passwordFromFile(text: string): string {
  const password = text.replace(/\r?\n$/, '');
  if ([...password].length < PASSWORD_MIN_LENGTH) {
    throw new AppError('invalid_password', `the password must have at least ${PASSWORD_MIN_LENGTH} characters`);
  }
  if ([...password].length > PASSWORD_MAX_LENGTH) {
    throw new AppError('invalid_password', `the password must have at most ${PASSWORD_MAX_LENGTH} characters`);
  }
  return password;
}

export async function createUser(pool: Pool, input: { email: string; password: string }): Promise<PanelUser> {
  const hash = await hashPassword(input.password);
  const { rows } = await query<UserRow>(
    pool,
    `INSERT INTO panel_users (email, password_hash) VALUES ($1, $2)
     ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${COLUMNS}`,
    [input.email.trim(), hash],
  );
  if (!rows[0]) throw new AppError('user_already_exists', `a panel user with email ${input.email.trim()} exists`);
  return toUser(rows[0]);
}

/** The user of an address (any case), or user_not_found. */
export async function getUserByEmail(pool: Pool, email: string): Promise<PanelUser> {
  const { rows } = await query<UserRow>(pool, `SELECT ${COLUMNS} FROM panel_users WHERE lower(email) = lower($1)`, [email.trim()]);
  if (!rows[0]) throw new NotFoundError('user', email.trim());
  return toUser(rows[0]);
}

/** Deletes every session of a user: they are refused (401) from the next request on. */
async function endSessionsOf(c: Client, userId: number): Promise<number> {
  const { rowCount } = await c.query('DELETE FROM panel_sessions WHERE user_id = $1', [userId]);
  return rowCount ?? 0;
}

/** A new password; every session of the user ends (whoever held the old one is signed out). */
export async function resetPassword(pool: Pool, input: { email: string; password: string }): Promise<PanelUser & { sessions_revoked: number }> {
  const hash = await hashPassword(input.password);
  return withTransaction(pool, async (c) => {
    const { rows } = await c.query<UserRow>(
      `UPDATE panel_users SET password_hash = $2, updated_at = now() WHERE lower(email) = lower($1) RETURNING ${COLUMNS}`,
      [input.email.trim(), hash],
    );
    if (!rows[0]) throw new NotFoundError('user', input.email.trim());
    return { ...toUser(rows[0]), sessions_revoked: await endSessionsOf(c, Number(rows[0].id)) };
  });
}

/**
 * Disables a user (no login from then on) and ends its sessions at once. Memberships stay, so
 * enabling the user again restores what they could do. Disabling a disabled user keeps its date.
 */
export async function setUserDisabled(pool: Pool, email: string, disabled: boolean): Promise<PanelUser & { sessions_revoked: number }> {
  return withTransaction(pool, async (c) => {
    const { rows } = await c.query<UserRow>(
      `UPDATE panel_users
          SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, now()) END, updated_at = now()
        WHERE lower(email) = lower($1) RETURNING ${COLUMNS}`,
      [email.trim(), disabled],
    );
    if (!rows[0]) throw new NotFoundError('user', email.trim());
    return { ...toUser(rows[0]), sessions_revoked: disabled ? await endSessionsOf(c, Number(rows[0].id)) : 0 };
  });
}
