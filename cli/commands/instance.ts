import {
  createInstance,
  isSendLimitValue,
  SEND_LIMITS,
  setInstanceAllowList,
  setInstanceEnabled,
  setInstanceLimits,
  type SendLimit,
} from '../../domain/tenancy/instances.js';
import { defineCommand } from '../command.js';
import { optional, repeatable, required, toggle, UsageError, type Parse } from '../flags.js';

const slug = required('slug', 'the instance');

/** The release of mails on hold, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const onHold = () => import('../../domain/mail/onhold.js');

/** A limit's value as the domain allows it, or none/unlimited to remove the limit. */
function sendLimit(limit: SendLimit): Parse<number | null> {
  return (text, flag) => {
    if (text === 'none' || text === 'unlimited') return null;
    const n = Number(text);
    if (text.trim() === '' || !isSendLimitValue(limit, n)) {
      throw new UsageError(`${flag} must be a ${SEND_LIMITS[limit].whole ? 'whole ' : ''}number or none`);
    }
    return n;
  };
}

export const instanceCommands = [
  defineCommand({
    name: 'instance create',
    summary: 'Create an instance (a tenant)',
    flags: {
      slug: required('slug', 'lowercase letters, digits, dashes: names the instance'),
      name: optional('name', 'display name (default: the slug)'),
      tz: optional('zone', 'IANA time zone for date filters (default: UTC)'),
    },
    run: (ctx, f) => createInstance(ctx.pool, { slug: f.slug, name: f.name, tz: f.tz }),
  }),
  defineCommand({
    name: 'instance disable',
    summary: 'Refuse every request of an instance (403 forbidden)',
    flags: { slug },
    run: (ctx, f) => setInstanceEnabled(ctx.pool, f.slug, false),
  }),
  defineCommand({
    name: 'instance enable',
    summary: 'Serve a disabled instance again',
    flags: { slug },
    run: (ctx, f) => setInstanceEnabled(ctx.pool, f.slug, true),
  }),
  defineCommand({
    name: 'instance allow-ip',
    summary: "Add networks to an instance's IP allow list, or clear it",
    description: 'An empty list allows every address. Give --cidr (repeatable) or --clear.',
    flags: {
      slug,
      cidr: repeatable('cidr', 'a network or address to allow'),
      clear: toggle('empty the list first (alone: every address allowed)'),
    },
    usage: '--slug <slug> (--cidr <cidr> [--cidr <cidr> ...] | --clear)',
    run: (ctx, f) => {
      if (!f.cidr.length && !f.clear) throw new UsageError('give --cidr (repeatable) or --clear');
      return setInstanceAllowList(ctx.pool, f.slug, { add: f.cidr, clear: f.clear });
    },
  }),
  defineCommand({
    name: 'instance set-limits',
    summary: 'Set sending limits: rate, burst, monthly quota (none removes one)',
    description: 'Absent flags leave their limit as it is. Mails on hold that a raised quota frees are released at once.',
    flags: {
      slug,
      rate: optional('per-second', 'mails per second (a fraction allowed), or none', sendLimit('send_rate_per_second')),
      burst: optional('mails', 'mails sent at once before the rate applies, or none', sendLimit('send_burst')),
      'monthly-quota': optional('mails', 'mails per calendar month, or none', sendLimit('monthly_quota')),
    },
    run: async (ctx, f) => {
      const instance = await setInstanceLimits(ctx.pool, f.slug, {
        send_rate_per_second: f.rate,
        send_burst: f.burst,
        monthly_quota: f['monthly-quota'],
      });
      // A raised quota frees mails on hold now rather than at the worker's next sweep.
      const released = await (await onHold()).releaseOnHold({ instanceId: instance.id, slug: instance.slug, tz: instance.tz }, ctx.pool, ctx.queue);
      return { ...instance, released_from_hold: released };
    },
  }),
];
