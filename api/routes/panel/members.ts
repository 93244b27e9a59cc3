import { cancelInvitation, inviteMember, listInvitations } from '../../../domain/panel/invitations.js';
import { instancesOf, leaveInstance, listMembers, removeMember, setMemberRole } from '../../../domain/panel/members.js';
import { defineRoute } from '../../http/route.js';
import { resourceId } from '../../schemas/common.js';
import { invitationSchema, memberCreateSchema, memberInstancesSchema, memberPatchSchema, memberSchema, membersSchema } from '../../schemas/panel.js';
import { TAGS } from '../tags.js';

/**
 * The panel's members of an instance and the signed-in user's instances (docs/panel.md). Reading
 * the members is any member's (viewer); changing them is the owner's. A user id that is not a
 * member of the X-Instance-Slug instance is 404 member_not_found, whether or not it is a member
 * elsewhere. An owner invites (issue 37): nobody becomes a member without accepting
 * (api/routes/panel/invitations.ts), and the answer never tells whether a user has the address.
 */

const tag = TAGS.panel;
const byUser = { user_id: resourceId };
const byInvitation = { invitation_id: resourceId };

export const panelMemberRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/private/instances',
    operationId: 'listPanelInstances',
    summary: "List the signed-in user's instances",
    description:
      'Every instance the session’s user is a member of, with its role there (by slug): what the panel offers to switch between. ' +
      'Takes no X-Instance-Slug.',
    tag,
    auth: { kind: 'session' },
    success: { status: 200, description: 'The instances, by slug', schema: memberInstancesSchema },
    handler: async ({ session, deps }) => ({ data: await instancesOf(deps.pool, session.user.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/private/members',
    operationId: 'listPanelMembers',
    summary: "List the instance's members and pending invitations",
    description:
      'Every member of the X-Instance-Slug instance with its role (status member), by email address, then every pending invitation ' +
      '(status invited: not a member for anything until accepted); any member may read them (viewer).',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    success: { status: 200, description: 'The members, then the invitations', schema: membersSchema },
    handler: async ({ tenant, deps }) => ({
      data: [...(await listMembers(tenant.instanceId, deps.pool)), ...(await listInvitations(tenant.instanceId, deps.pool))],
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/members',
    operationId: 'invitePanelMember',
    summary: 'Invite a member',
    description:
      'Owner only. Invites the address with a role: the person of that address becomes a member only by accepting in the panel ' +
      '(POST /v1/private/invitations/{invitation_id}/accept). The answer is the same whether or not a panel user has the address ' +
      '(an invitation to an address nobody has yet shows to the user later created with it), so addresses cannot be probed. ' +
      'Inviting a pending address again changes its role. 409 user_already_member when the address is a member already ' +
      '(its role is changed with PATCH).',
    tag,
    auth: { kind: 'session', role: 'owner' },
    body: memberCreateSchema,
    success: { status: 201, description: 'The invitation (status invited)', schema: invitationSchema },
    errors: [409],
    handler: async ({ tenant, session, body, deps }, res) => {
      const invitation = await inviteMember(tenant.instanceId, deps.pool, body, session.user.id);
      res.status(201);
      return invitation;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/private/members/invitations/{invitation_id}',
    operationId: 'cancelPanelInvitation',
    summary: 'Withdraw an invitation',
    description: 'Owner only. A pending invitation of the instance is withdrawn; 404 invitation_not_found for any other id.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    params: byInvitation,
    success: { status: 204, description: 'Withdrawn' },
    handler: async ({ tenant, params, deps }, res) => {
      await cancelInvitation(tenant.instanceId, deps.pool, params.invitation_id);
      res.status(204).end();
      return undefined;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/private/membership',
    operationId: 'leavePanelInstance',
    summary: 'Leave the instance',
    description:
      'Any member: the session’s user stops being a member of the X-Instance-Slug instance, at once for all its sessions ' +
      '(the user and its other memberships stay). The last owner cannot leave: 409 member_last_owner (make another member owner first).',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    success: { status: 204, description: 'Left' },
    errors: [409],
    handler: async ({ tenant, session, deps }, res) => {
      await leaveInstance(tenant.instanceId, deps.pool, session.user.id);
      res.status(204).end();
      return undefined;
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/private/members/{user_id}',
    operationId: 'updatePanelMember',
    summary: "Change a member's role",
    description: 'Owner only. Making the last owner anything else is refused with 409 member_last_owner: an instance always keeps an owner.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    params: byUser,
    body: memberPatchSchema,
    success: { status: 200, description: 'The member', schema: memberSchema },
    errors: [409],
    handler: ({ tenant, params, body, deps }) => setMemberRole(tenant.instanceId, deps.pool, params.user_id, body.role),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/private/members/{user_id}',
    operationId: 'removePanelMember',
    summary: 'Remove a member',
    description:
      'Owner only. The user loses the instance at once (its sessions stay, for its other instances); the user itself is not deleted. ' +
      'Removing the last owner is refused with 409 member_last_owner.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    params: byUser,
    success: { status: 204, description: 'Removed' },
    errors: [409],
    handler: async ({ tenant, params, deps }, res) => {
      await removeMember(tenant.instanceId, deps.pool, params.user_id);
      res.status(204).end();
      return undefined;
    },
  }),
];
