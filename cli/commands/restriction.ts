import { AppError } from '../../domain/errors.js';
import { lift, restrict, restrictionAddress, RESTRICTION_REASONS } from '../../domain/restrictions/restrictions.js';
import { defineCommand } from '../command.js';
import { emailAddress, oneOf, required } from '../flags.js';

const instance = required('slug', 'the instance');
const recipient = required('address', 'the recipient address', emailAddress);

/** The tenant transaction, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const tenancy = () => import('../../domain/tenancy/context.js');

export const restrictionCommands = [
  defineCommand({
    // Panel-only creation, so `unspecified` is accepted here though Cartero itself never writes it.
    name: 'restriction add',
    summary: 'Stop sending to an address',
    description: 'When one is already in force it is kept as it was (reason and date of the first cause) and created is false.',
    flags: {
      instance,
      recipient,
      reason: required(RESTRICTION_REASONS.join('|'), 'why', oneOf(RESTRICTION_REASONS)),
    },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      const { withTenant } = await tenancy();
      const { restriction, created } = await withTenant(ctx.pool, tenant, (c) => restrict(tenant, c, f.recipient, f.reason));
      return { ...restriction, created };
    },
  }),
  defineCommand({
    name: 'restriction lift',
    summary: 'Lift the restriction in force on an address (kept as history)',
    flags: { instance, recipient },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      const { withTenant } = await tenancy();
      const lifted = await withTenant(ctx.pool, tenant, (c) => lift(tenant, c, f.recipient));
      if (!lifted) throw new AppError('restriction_not_found', `no restriction in force for ${restrictionAddress(f.recipient)}`);
      return lifted;
    },
  }),
];
