import type { Pool } from '../sql/pool.js';
import type { JobQueue } from '../domain/jobs.js';
import { releaseOnHold } from '../domain/mail/onhold.js';
import { AppError } from '../domain/errors.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { createInstance, getInstanceBySlug, setInstanceAllowList, setInstanceEnabled, setInstanceLimits } from '../domain/tenancy/instances.js';
import { createApiKey, revokeApiKey } from '../domain/tenancy/api-keys.js';
import { addDomain, setDomainChecks, type DnsCheckState } from '../domain/domains/domains.js';
import { createSender, setSenderConsentRequired } from '../domain/senders/senders.js';
import { lift, restrict, restrictionAddress, RESTRICTION_REASONS, type RestrictionReason } from '../domain/restrictions/restrictions.js';
import { withTenant } from '../domain/tenancy/context.js';
import { rotateReportKey } from '../domain/bounces/report-keys.js';

/** Parsed flags: strings, repeatable flags as arrays, boolean switches as true. */
export type Flags = Record<string, string | boolean | Array<string | boolean> | undefined>;

export interface Command {
  /** e.g. "instance create" */
  name: string;
  usage: string;
  /** Flag names with their kind, for node:util parseArgs. */
  flags: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;
  run(pool: Pool, flags: Flags, queue: JobQueue): Promise<unknown>;
}

export class UsageError extends Error {}

function str(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function optStr(flags: Flags, name: string): string | undefined {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
}

function list(flags: Flags, name: string): string[] {
  const v = flags[name];
  return Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : [];
}

function bool(flags: Flags, name: string): boolean {
  const v = str(flags, name);
  if (v !== 'true' && v !== 'false') throw new UsageError(`--${name} must be true or false`);
  return v === 'true';
}

function id(flags: Flags, name: string): number {
  const v = Number(str(flags, name));
  if (!Number.isSafeInteger(v) || v < 1) throw new UsageError(`--${name} must be a positive integer`);
  return v;
}

async function tenantOf(pool: Pool, slug: string): Promise<Tenant> {
  const instance = await getInstanceBySlug(pool, slug);
  return { instanceId: instance.id, slug: instance.slug, tz: instance.tz };
}

/** A limit flag: a non-negative number, or none/unlimited to remove the limit; absent: unchanged. */
function limit(flags: Flags, name: string, integer: boolean): number | null | undefined {
  const v = optStr(flags, name);
  if (v === undefined) return undefined;
  if (v === 'none' || v === 'unlimited') return null;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${name} must be a ${integer ? 'whole ' : ''}number or none`);
  }
  return n;
}

function checkState(flags: Flags, name: string): DnsCheckState | undefined {
  const v = optStr(flags, name);
  if (v === undefined) return undefined;
  if (v !== 'pending' && v !== 'approved' && v !== 'failed') throw new UsageError(`--${name} must be approved, pending or failed`);
  return v;
}

function restrictionReason(flags: Flags, name: string): RestrictionReason {
  const v = str(flags, name);
  if (!(RESTRICTION_REASONS as readonly string[]).includes(v)) throw new UsageError(`--${name} must be one of ${RESTRICTION_REASONS.join(', ')}`);
  return v as RestrictionReason;
}

function emailAddress(flags: Flags, name: string): string {
  const v = str(flags, name);
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.trim())) throw new UsageError(`--${name} must be an email address`);
  return v;
}

export const commands: Command[] = [
  {
    name: 'instance create',
    usage: '--slug S [--name N] [--tz ZONE]',
    flags: { slug: { type: 'string' }, name: { type: 'string' }, tz: { type: 'string' } },
    run: (pool, f) => createInstance(pool, { slug: str(f, 'slug'), name: optStr(f, 'name'), tz: optStr(f, 'tz') }),
  },
  {
    name: 'instance disable',
    usage: '--slug S',
    flags: { slug: { type: 'string' } },
    run: (pool, f) => setInstanceEnabled(pool, str(f, 'slug'), false),
  },
  {
    name: 'instance enable',
    usage: '--slug S',
    flags: { slug: { type: 'string' } },
    run: (pool, f) => setInstanceEnabled(pool, str(f, 'slug'), true),
  },
  {
    name: 'instance allow-ip',
    usage: '--slug S (--cidr C [--cidr C ...] | --clear)',
    flags: { slug: { type: 'string' }, cidr: { type: 'string', multiple: true }, clear: { type: 'boolean' } },
    run: (pool, f) => {
      const cidrs = list(f, 'cidr');
      if (!cidrs.length && !f.clear) throw new UsageError('give --cidr (repeatable) or --clear');
      return setInstanceAllowList(pool, str(f, 'slug'), { add: cidrs, clear: f.clear === true });
    },
  },
  {
    name: 'instance set-limits',
    usage: '--slug S [--rate PER_SECOND] [--burst N] [--monthly-quota N]  (none removes a limit)',
    flags: { slug: { type: 'string' }, rate: { type: 'string' }, burst: { type: 'string' }, 'monthly-quota': { type: 'string' } },
    run: async (pool, f, queue) => {
      const instance = await setInstanceLimits(pool, str(f, 'slug'), {
        send_rate_per_second: limit(f, 'rate', false),
        send_burst: limit(f, 'burst', true),
        monthly_quota: limit(f, 'monthly-quota', true),
      });
      // A raised quota frees mails on hold now rather than at the worker's next sweep.
      const released = await releaseOnHold({ instanceId: instance.id, slug: instance.slug, tz: instance.tz }, pool, queue);
      return { ...instance, released_from_hold: released };
    },
  },
  {
    name: 'key create',
    usage: '--instance S --scopes a,b,c [--allow-ip CIDR ...] [--expires-at ISO]',
    flags: { instance: { type: 'string' }, scopes: { type: 'string' }, 'allow-ip': { type: 'string', multiple: true }, 'expires-at': { type: 'string' } },
    run: (pool, f) => {
      const expires = optStr(f, 'expires-at');
      const expiresAt = expires === undefined ? null : new Date(expires);
      if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO 8601 date-time');
      return createApiKey(pool, {
        instanceSlug: str(f, 'instance'),
        scopes: str(f, 'scopes').split(',').map((s) => s.trim()).filter(Boolean),
        allowCidrs: list(f, 'allow-ip'),
        expiresAt,
      });
    },
  },
  {
    name: 'key revoke',
    usage: '--key-id K',
    flags: { 'key-id': { type: 'string' } },
    run: (pool, f) => revokeApiKey(pool, str(f, 'key-id')),
  },
  {
    name: 'domain add',
    usage: '--instance S --name D',
    flags: { instance: { type: 'string' }, name: { type: 'string' } },
    run: async (pool, f) => addDomain(await tenantOf(pool, str(f, 'instance')), pool, str(f, 'name')),
  },
  {
    name: 'domain set-checks',
    usage: '--instance S --name D [--mx S] [--spf S] [--dkim S] [--dmarc S]  (approved, pending, failed)',
    flags: {
      instance: { type: 'string' }, name: { type: 'string' },
      mx: { type: 'string' }, spf: { type: 'string' }, dkim: { type: 'string' }, dmarc: { type: 'string' },
    },
    run: async (pool, f) =>
      setDomainChecks(await tenantOf(pool, str(f, 'instance')), pool, str(f, 'name'), {
        mx: checkState(f, 'mx'), spf: checkState(f, 'spf'), dkim: checkState(f, 'dkim'), dmarc: checkState(f, 'dmarc'),
      }),
  },
  {
    name: 'sender create',
    usage: '--instance S --email E --name N [--consent-required]',
    flags: { instance: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, 'consent-required': { type: 'boolean' } },
    run: async (pool, f) =>
      createSender(await tenantOf(pool, str(f, 'instance')), pool, {
        email: str(f, 'email'),
        name: str(f, 'name'),
        consentRequired: f['consent-required'] === true,
      }),
  },
  {
    name: 'sender set-consent-required',
    usage: '--instance S --id N --value true|false',
    flags: { instance: { type: 'string' }, id: { type: 'string' }, value: { type: 'string' } },
    run: async (pool, f) => setSenderConsentRequired(await tenantOf(pool, str(f, 'instance')), pool, id(f, 'id'), bool(f, 'value')),
  },
  {
    // Panel-only creation, so `unspecified` is accepted here though Cartero itself never writes it.
    name: 'restriction add',
    usage: `--instance S --recipient R --reason ${RESTRICTION_REASONS.join('|')}`,
    flags: { instance: { type: 'string' }, recipient: { type: 'string' }, reason: { type: 'string' } },
    run: async (pool, f) => {
      const recipient = emailAddress(f, 'recipient');
      const reason = restrictionReason(f, 'reason');
      const tenant = await tenantOf(pool, str(f, 'instance'));
      // created false: one was already in force, and it is kept as it was (reason and date of the first cause).
      const { restriction, created } = await withTenant(pool, tenant, (c) => restrict(tenant, c, recipient, reason));
      return { ...restriction, created };
    },
  },
  {
    name: 'restriction lift',
    usage: '--instance S --recipient R',
    flags: { instance: { type: 'string' }, recipient: { type: 'string' } },
    run: async (pool, f) => {
      const recipient = emailAddress(f, 'recipient');
      const tenant = await tenantOf(pool, str(f, 'instance'));
      const lifted = await withTenant(pool, tenant, (c) => lift(tenant, c, recipient));
      if (!lifted) throw new AppError(404, 'restriction_not_found', `no restriction in force for ${restrictionAddress(recipient)}`);
      return lifted;
    },
  },
  {
    // New mails are tagged with the new key once each worker restarts; every older key keeps
    // verifying the reports of mails already sent (docs/security.md).
    name: 'report-key rotate',
    usage: '',
    flags: {},
    run: (pool) => rotateReportKey(pool),
  },
];

export function describeError(err: unknown): string {
  if (err instanceof UsageError) return err.message;
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  return (err as Error)?.message ?? String(err);
}
