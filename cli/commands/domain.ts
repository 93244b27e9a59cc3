import { addDomain, DNS_CHECK_STATES, setDomainChecks } from '../../domain/domains/domains.js';
import { defineCommand } from '../command.js';
import { oneOf, optional, required } from '../flags.js';

const checkState = (check: string) =>
  optional('state', `${check} check: ${DNS_CHECK_STATES.join(', ')}`, oneOf(DNS_CHECK_STATES, 'approved, pending or failed'));

export const domainCommands = [
  defineCommand({
    name: 'domain add',
    summary: 'Add a sending domain (its four DNS checks pending)',
    flags: {
      instance: required('slug', 'the instance'),
      name: required('domain', 'the domain name'),
    },
    run: async (ctx, f) => addDomain(await ctx.tenant(f.instance), ctx.pool, f.name),
  }),
  defineCommand({
    name: 'domain set-checks',
    summary: "Record a domain's DNS check results; verified once all four are approved",
    description: 'Absent flags leave their check as it is.',
    flags: {
      instance: required('slug', 'the instance'),
      name: required('domain', 'the domain name'),
      mx: checkState('MX'),
      spf: checkState('SPF'),
      dkim: checkState('DKIM'),
      dmarc: checkState('DMARC'),
    },
    run: async (ctx, f) =>
      setDomainChecks(await ctx.tenant(f.instance), ctx.pool, f.name, { mx: f.mx, spf: f.spf, dkim: f.dkim, dmarc: f.dmarc }),
  }),
];
