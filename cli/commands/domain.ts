import { DNS_CHECK_STATES } from '../../domain/domains/check-states.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { CliContext } from '../command.js';
import { defineCommand } from '../command.js';
import { oneOf, optional, required } from '../flags.js';

const checkState = (check: string) =>
  optional('state', `${check} check: ${DNS_CHECK_STATES.join(', ')}`, oneOf(DNS_CHECK_STATES, 'approved, pending or failed'));

const target = {
  instance: required('slug', 'the instance'),
  name: required('domain', 'the domain name'),
};

/** The domain rules, loaded by the domain command that runs: a command's start loads only its own (cli/commands/index.ts). */
const domains = () => import('../../domain/domains/domains.js');
const dkimKeys = () => import('../../domain/domains/dkim-keys.js');
const dnsRecords = () => import('../../domain/domains/dns-records.js');
const dnsVerify = () => import('../../domain/domains/dns-verify.js');
const keyEncryption = () => import('../../domain/domains/key-encryption.js');

/** The domain as `GET /v1/domains/{id}` shows it: checks and the records to publish (never a private key). */
async function show(ctx: CliContext, tenant: Tenant, name: string) {
  const [{ getDomainWithRecords }, { dnsSettings }] = await Promise.all([import('../../domain/domains/domain-records.js'), dnsRecords()]);
  return getDomainWithRecords(tenant, ctx.pool, { name }, dnsSettings(ctx.config));
}

export const domainCommands = [
  defineCommand({
    name: 'domain add',
    summary: 'Add a sending domain with a new DKIM key; prints the DNS records to publish',
    description:
      'Generates an RSA 2048 DKIM key (selector cartero<yyyymm>), stored encrypted under DKIM_KEY_ENCRYPTION_KEY; only its public part is ever shown. ' +
      'The four checks start pending: publish the records, then run `domain verify`.',
    flags: target,
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      const [{ addDomain }, { configuredKeyRing }] = await Promise.all([domains(), keyEncryption()]);
      await addDomain(tenant, ctx.pool, f.name, { ring: configuredKeyRing(ctx.config) });
      return show(ctx, tenant, f.name);
    },
  }),
  defineCommand({
    name: 'domain show',
    summary: "Show a domain's checks and the DNS records to publish, each with its check state",
    flags: target,
    run: async (ctx, f) => show(ctx, await ctx.tenant(f.instance), f.name),
  }),
  defineCommand({
    name: 'domain verify',
    summary: "Resolve a domain's records through DNS_SERVERS and record the MX, SPF, DKIM and DMARC checks",
    description:
      'Approved when a record is as shown by `domain show`, failed when it differs or has disappeared, pending while never published. ' +
      'When the resolver does not answer nothing changes and the command exits 1 with "DNS verification temporarily unavailable".',
    flags: target,
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      const [{ resolverLookups, verifyDomain }, { dnsSettings }] = await Promise.all([dnsVerify(), dnsRecords()]);
      await verifyDomain(tenant, ctx.pool, f.name, resolverLookups(ctx.config.domains.dnsServers), dnsSettings(ctx.config));
      return show(ctx, tenant, f.name);
    },
  }),
  defineCommand({
    name: 'domain rotate-dkim',
    summary: 'Give a domain a new DKIM key and selector; mail is signed with it once its record verifies',
    description: 'Both DKIM records are shown: keep the old one published until `domain verify` approves the new one (the old key is then retired).',
    flags: target,
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      const [{ rotateDkimKey }, { configuredKeyRing }] = await Promise.all([dkimKeys(), keyEncryption()]);
      await rotateDkimKey(tenant, ctx.pool, configuredKeyRing(ctx.config), f.name);
      return show(ctx, tenant, f.name);
    },
  }),
  defineCommand({
    name: 'domain set-checks',
    summary: "Operator override: set a domain's DNS check results by hand (closed networks); verified once all four are approved",
    description:
      'Absent flags leave their check as it is. For networks where DNS cannot be checked from the service: the scheduled verification then skips the domain until `domain verify` is run.',
    flags: {
      ...target,
      mx: checkState('MX'),
      spf: checkState('SPF'),
      dkim: checkState('DKIM'),
      dmarc: checkState('DMARC'),
    },
    run: async (ctx, f) => {
      const tenant = await ctx.tenant(f.instance);
      const { setDomainChecks } = await domains();
      await setDomainChecks(tenant, ctx.pool, f.name, { mx: f.mx, spf: f.spf, dkim: f.dkim, dmarc: f.dmarc });
      return show(ctx, tenant, f.name);
    },
  }),
];
