import { NotFoundError, RuleViolation } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import { query, withTransaction } from '../../sql/pool.js';
import type { MemberInstance } from './members.js';
import type { PanelRole } from './roles.js';

/**
 * Invitations to an instance (issue 37, docs/panel.md "Invitations"). An owner invites an address;
 * the person of that address becomes a member only by accepting in the panel. Until then it is no
 * member for anything (panel_members alone makes one: roles, the instance switcher, the sandbox's
 * recipients).
 *
 * The owner's side never tells whether a user has the address: an invitation is stored by address
 * either way, with the same answer, and one to an address nobody has yet shows to the user created
 * later with it. The invitee's side is found by the session user's address, so an invitation id of
 * anyone else is 404 invitation_not_found, as is an id that does not exist.
 */

/** An invitation as the instance's owner sees it (POST /v1/private/members, the members list). */
export interface Invitation {
  id: number;
  email: string;
  role: PanelRole;
  status: 'invited';
  created_at: string;
  updated_at: string;
}

interface InvitationRow {
  id: string;
  email: string;
  role: PanelRole;
  created_at: Date;
  updated_at: Date;
}

function toInvitation(r: InvitationRow): Invitation {
  return { id: Number(r.id), email: r.email, role: r.role, status: 'invited', created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

/**
 * Invites `email` with `role`; inviting a pending address again changes its role. Only an address
 * that is a member already is refused (user_already_member): the owner reads the members anyway, so
 * that says nothing new. Whether a user has the address is never read here.
 */
export async function inviteMember(instanceId: number, pool: Pool, input: { email: string; role: PanelRole }, invitedBy: number): Promise<Invitation> {
  const email = input.email.trim();
  return withTransaction(pool, async (c) => {
    const member = await c.query(
      'SELECT 1 FROM panel_members m JOIN panel_users u ON u.id = m.user_id WHERE m.instance_id = $1 AND lower(u.email) = lower($2)',
      [instanceId, email],
    );
    if (member.rowCount) throw new RuleViolation('user_already_member', `${email} is already a member of this instance`);
    const { rows } = await c.query<InvitationRow>(
      `INSERT INTO panel_invitations (instance_id, email, role, invited_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (instance_id, lower(email)) DO UPDATE SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by, updated_at = now()
       RETURNING id, email, role, created_at, updated_at`,
      [instanceId, email, input.role, invitedBy],
    );
    return toInvitation(rows[0]!);
  });
}

/** The instance's pending invitations, by address. */
export async function listInvitations(instanceId: number, pool: Pool): Promise<Invitation[]> {
  const { rows } = await query<InvitationRow>(
    pool,
    'SELECT id, email, role, created_at, updated_at FROM panel_invitations WHERE instance_id = $1 ORDER BY lower(email), id',
    [instanceId],
  );
  return rows.map(toInvitation);
}

/** An owner withdraws a pending invitation of its instance. */
export async function cancelInvitation(instanceId: number, pool: Pool, id: number): Promise<void> {
  const { rowCount } = await query(pool, 'DELETE FROM panel_invitations WHERE instance_id = $1 AND id = $2', [instanceId, id]);
  if (!rowCount) throw new NotFoundError('invitation', id);
}

/** An invitation as its invitee sees it: which instance, as what. */
export interface ReceivedInvitation {
  id: number;
  instance: { slug: string; name: string };
  role: PanelRole;
  created_at: string;
}

/** The pending invitations addressed to the user of `email` (the session's user). */
export async function invitationsFor(pool: Pool, email: string): Promise<ReceivedInvitation[]> {
  const { rows } = await query<{ id: string; slug: string; name: string; role: PanelRole; created_at: Date }>(
    pool,
    `SELECT v.id, i.slug, i.name, v.role, v.created_at FROM panel_invitations v JOIN instances i ON i.id = v.instance_id
      WHERE lower(v.email) = lower($1) ORDER BY v.created_at, v.id`,
    [email],
  );
  return rows.map((r) => ({ id: Number(r.id), instance: { slug: r.slug, name: r.name }, role: r.role, created_at: r.created_at.toISOString() }));
}

/**
 * The invitee accepts: it becomes a member with the invitation's role, and the invitation is gone.
 * Already a member (the operator's `member add` meanwhile): its role stays, the invitation is used up.
 */
export async function acceptInvitation(pool: Pool, user: { id: number; email: string }, id: number): Promise<MemberInstance> {
  return withTransaction(pool, async (c) => {
    const taken = await c.query<{ instance_id: string; role: PanelRole }>(
      'DELETE FROM panel_invitations WHERE id = $1 AND lower(email) = lower($2) RETURNING instance_id, role',
      [id, user.email],
    );
    const invitation = taken.rows[0];
    if (!invitation) throw new NotFoundError('invitation', id);
    await c.query('INSERT INTO panel_members (instance_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (instance_id, user_id) DO NOTHING', [
      invitation.instance_id,
      user.id,
      invitation.role,
    ]);
    const { rows } = await c.query<MemberInstance>(
      'SELECT i.slug, i.name, m.role, i.enabled FROM panel_members m JOIN instances i ON i.id = m.instance_id WHERE m.instance_id = $1 AND m.user_id = $2',
      [invitation.instance_id, user.id],
    );
    return rows[0]!;
  });
}

/** The invitee declines: the invitation is gone, nothing else changes. */
export async function declineInvitation(pool: Pool, user: { email: string }, id: number): Promise<void> {
  const { rowCount } = await query(pool, 'DELETE FROM panel_invitations WHERE id = $1 AND lower(email) = lower($2)', [id, user.email]);
  if (!rowCount) throw new NotFoundError('invitation', id);
}
