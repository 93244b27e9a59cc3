import { addMember, instancesOf, listMembers, removeMember, setMemberRole } from '../../domain/panel/members.js';
import type { PanelRole } from '../../domain/panel/roles.js';
import { defineRoute } from '../http/route.js';
import { resourceId } from '../schemas/common.js';
import { memberCreateSchema, memberInstancesSchema, memberPatchSchema, memberSchema, membersSchema } from '../schemas/panel.js';
import { TAGS } from './tags.js';

/**
 * The panel's members of an instance and the signed-in user's instances (docs/panel.md). Reading
 * the members is any member's (viewer); changing them is the owner's. A user id that is not a
 * member of the X-Instance-Slug instance is 404 member_not_found, whether or not it is a member
 * elsewhere.
 */

const tag = TAGS.panel;
const byUser = { user_id: resourceId };

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
    summary: "List the instance's members",
    description: 'Every member of the X-Instance-Slug instance with its role, by email address; any member may read them (viewer).',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    success: { status: 200, description: 'The members', schema: membersSchema },
    handler: async ({ tenant, deps }) => ({ data: await listMembers(tenant.instanceId, deps.pool) }),
  }),
  defineRoute<Record<string, never>, Record<string, never>, { email: string; role: PanelRole }>({
    method: 'post',
    path: '/v1/private/members',
    operationId: 'addPanelMember',
    summary: 'Add a member',
    description:
      'Makes an existing panel user (cartero user create) a member of the instance with a role. Owner only. 404 user_not_found ' +
      'when no user has that address; 409 user_already_member when it is a member already (its role is changed with PATCH).',
    tag,
    auth: { kind: 'session', role: 'owner' },
    body: memberCreateSchema,
    success: { status: 201, description: 'The new member', schema: memberSchema },
    errors: [409],
    handler: async ({ tenant, body, deps }, res) => {
      const member = await addMember(tenant.instanceId, deps.pool, body);
      res.status(201);
      return member;
    },
  }),
  defineRoute<Record<string, never>, { user_id: number }, { role: PanelRole }>({
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
  defineRoute<Record<string, never>, { user_id: number }>({
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
