import { NotFoundError, RuleViolation } from '../errors.js';
import type { Client, Pool } from '../../sql/pool.js';
import { query, withTransaction } from '../../sql/pool.js';
import type { PanelRole } from './roles.js';

/**
 * Who may use an instance in the panel, and as what (docs/panel.md). Tenant first: the instance
 * id comes from the authenticated request (or the CLI's --instance), and every statement names
 * it, so a user id of another instance is simply not found. An instance always keeps an owner:
 * removing or demoting the last one is refused (member_last_owner), under a lock on the
 * instance's member rows so two owners demoting each other at once cannot both succeed.
 */
export interface Member {
  user_id: number;
  email: string;
  role: PanelRole;
  /** A member (an invitation not yet accepted is listed beside the members with status invited: domain/panel/invitations.ts). */
  status: 'member';
  /** The user is disabled (cartero user disable): a member still, but unable to sign in. */
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

interface MemberRow {
  user_id: string;
  email: string;
  role: PanelRole;
  disabled: boolean;
  created_at: Date;
  updated_at: Date;
}

const SELECT_MEMBER = `SELECT m.user_id, u.email, m.role, u.disabled_at IS NOT NULL AS disabled, m.created_at, m.updated_at
  FROM panel_members m JOIN panel_users u ON u.id = m.user_id`;

function toMember(r: MemberRow): Member {
  return {
    user_id: Number(r.user_id),
    email: r.email,
    role: r.role,
    status: 'member',
    disabled: r.disabled,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export async function listMembers(instanceId: number, pool: Pool): Promise<Member[]> {
  const { rows } = await query<MemberRow>(pool, `${SELECT_MEMBER} WHERE m.instance_id = $1 ORDER BY lower(u.email), m.user_id`, [instanceId]);
  return rows.map(toMember);
}

async function memberIn(instanceId: number, c: Client, userId: number): Promise<Member> {
  const { rows } = await c.query<MemberRow>(`${SELECT_MEMBER} WHERE m.instance_id = $1 AND m.user_id = $2`, [instanceId, userId]);
  if (!rows[0]) throw new NotFoundError('member', userId);
  return toMember(rows[0]);
}

/**
 * Makes the user of `email` a member at once; user_not_found when there is none, user_already_member
 * when it is one. The operator's `cartero member add` only: the operator is trusted with every
 * instance. An owner in the panel invites instead (invitations.ts), so it can neither probe which
 * addresses have a user nor make anyone a member who did not accept.
 */
export async function addMember(instanceId: number, pool: Pool, input: { email: string; role: PanelRole }): Promise<Member> {
  return withTransaction(pool, async (c) => {
    const user = await c.query<{ id: string; email: string }>('SELECT id, email FROM panel_users WHERE lower(email) = lower($1)', [input.email.trim()]);
    if (!user.rows[0]) throw new NotFoundError('user', input.email.trim());
    const userId = Number(user.rows[0].id);
    const inserted = await c.query(
      'INSERT INTO panel_members (instance_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (instance_id, user_id) DO NOTHING',
      [instanceId, userId, input.role],
    );
    if (!inserted.rowCount) throw new RuleViolation('user_already_member', `${user.rows[0].email} is already a member of this instance`);
    return memberIn(instanceId, c, userId);
  });
}

/** Locks the instance's member rows and counts its owners (the last-owner rule reads it). */
async function ownersLocked(instanceId: number, c: Client): Promise<number> {
  const { rows } = await c.query<{ role: PanelRole }>('SELECT role FROM panel_members WHERE instance_id = $1 FOR UPDATE', [instanceId]);
  return rows.filter((r) => r.role === 'owner').length;
}

function refuseLastOwner(what: string): never {
  throw new RuleViolation('member_last_owner', `${what} would leave the instance without an owner; make another member owner first`);
}

export async function setMemberRole(instanceId: number, pool: Pool, userId: number, role: PanelRole): Promise<Member> {
  return withTransaction(pool, async (c) => {
    const owners = await ownersLocked(instanceId, c);
    const member = await memberIn(instanceId, c, userId);
    if (member.role === 'owner' && role !== 'owner' && owners <= 1) refuseLastOwner('Changing the role of the last owner');
    if (member.role === role) return member;
    await c.query('UPDATE panel_members SET role = $3, updated_at = now() WHERE instance_id = $1 AND user_id = $2', [instanceId, userId, role]);
    return memberIn(instanceId, c, userId);
  });
}

/** Removes a membership (the user and its other memberships stay); its sessions lose this instance at once. */
export async function removeMember(instanceId: number, pool: Pool, userId: number): Promise<Member> {
  return endMembership(instanceId, pool, userId, 'Removing the last owner');
}

/**
 * The session's user leaves the instance, whatever its role, unless it is the last owner
 * (member_last_owner: it makes another member owner first). Its sessions lose the instance at once:
 * the role is read from panel_members on every request.
 */
export async function leaveInstance(instanceId: number, pool: Pool, userId: number): Promise<Member> {
  return endMembership(instanceId, pool, userId, 'Leaving as the last owner');
}

async function endMembership(instanceId: number, pool: Pool, userId: number, what: string): Promise<Member> {
  return withTransaction(pool, async (c) => {
    const owners = await ownersLocked(instanceId, c);
    const member = await memberIn(instanceId, c, userId);
    if (member.role === 'owner' && owners <= 1) refuseLastOwner(what);
    await c.query('DELETE FROM panel_members WHERE instance_id = $1 AND user_id = $2', [instanceId, userId]);
    return member;
  });
}

/** The instances a user is a member of, with its role in each (the panel's instance switcher). */
export interface MemberInstance {
  slug: string;
  name: string;
  role: PanelRole;
  enabled: boolean;
}

export async function instancesOf(pool: Pool, userId: number): Promise<MemberInstance[]> {
  const { rows } = await query<MemberInstance>(
    pool,
    `SELECT i.slug, i.name, m.role, i.enabled FROM panel_members m JOIN instances i ON i.id = m.instance_id
      WHERE m.user_id = $1 ORDER BY i.slug`,
    [userId],
  );
  return rows;
}
