import { PANEL_ROLES } from '../../domain/panel/roles.js';
import { defineCommand } from '../command.js';
import { emailAddress, oneOf, required } from '../flags.js';

/** Panel members and users, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const members = () => import('../../domain/panel/members.js');
const users = () => import('../../domain/panel/users.js');

const instance = required('slug', 'the instance');
const email = required('address', 'the email address of a panel user (user create)', emailAddress);

export const memberCommands = [
  defineCommand({
    name: 'member add',
    summary: 'Make a panel user a member of an instance with a role',
    description:
      'viewer reads; admin also writes; owner also manages members and keys. A member already: 409 user_already_member. ' +
      'A member at once, with no invitation: the operator is trusted (an owner in the panel only invites; docs/panel.md, Invitations).',
    flags: { instance, email, role: required(PANEL_ROLES.join('|'), "the user's role in the instance", oneOf(PANEL_ROLES)) },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      return { instance: tenant.slug, ...(await (await members()).addMember(tenant.instanceId, ctx.pool, { email: f.email, role: f.role })) };
    },
  }),
  defineCommand({
    name: 'member remove',
    summary: 'Remove a panel user from an instance (the user stays)',
    description: 'The last owner of an instance cannot be removed (409 member_last_owner): make another member owner first.',
    flags: { instance, email },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      const user = await (await users()).getUserByEmail(ctx.pool, f.email);
      const removed = await (await members()).removeMember(tenant.instanceId, ctx.pool, user.id);
      return { instance: tenant.slug, ...removed, removed: true };
    },
  }),
];
