import { AppError, NotFoundError } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import type { PageRequest, Page } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { DNS_CHECK_STATES, type DnsCheckState } from './check-states.js';
import { generateDkimKeyPair, insertDkimKey, type DkimKey } from './dkim-keys.js';
import { normalizeDomainName } from './domain-name.js';
import type { KeyRing } from './key-encryption.js';
import { refuseSandbox } from './sandbox.js';

/** The full domain record (spec: Domain status, plus the four protocol states). */
export interface Domain {
  id: number;
  domain: string;
  is_verified: boolean;
  mx_status: DnsCheckState;
  spf_status: DnsCheckState;
  dkim_status: DnsCheckState;
  dmarc_status: DnsCheckState;
  created_at: Date;
  updated_at: Date;
}

export interface DomainStatus {
  id: number;
  domain: string;
  is_verified: boolean;
}

const COLUMNS = 'id, name AS domain, is_verified, mx_status, spf_status, dkim_status, dmarc_status, created_at, updated_at';

export async function listDomains(tenant: Tenant, pool: Pool, req: PageRequest): Promise<Page<Domain>> {
  const { limit, offset } = window(req);
  return withTenant(pool, tenant, async (c) => {
    const rows = await c.query<Domain & { total_count: number }>(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total_count FROM domains WHERE instance_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
      [tenant.instanceId, limit, offset],
    );
    return toCountedPage(rows.rows, req, countWith(c, 'SELECT count(*)::int AS n FROM domains WHERE instance_id = $1', [tenant.instanceId]));
  });
}

export async function getDomainStatus(tenant: Tenant, pool: Pool, name: string): Promise<DomainStatus> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<DomainStatus>('SELECT id, name AS domain, is_verified FROM domains WHERE instance_id = $1 AND name = $2', [
      tenant.instanceId,
      normalizeDomainName(name),
    ]),
  );
  if (!rows[0]) throw new NotFoundError('domain', name);
  return rows[0];
}

/**
 * Adds a domain, its four checks pending. With a key ring (`cartero domain add`), its first DKIM
 * key is generated and stored sealed in the same transaction; without one (test fixtures, the
 * send benchmark's unsigned run) the domain has no key and its mail goes out unsigned until
 * `domain rotate-dkim` gives it one.
 */
export async function addDomain(tenant: Tenant, pool: Pool, name: string, opts: { ring?: KeyRing } = {}): Promise<Domain & { dkim_key?: DkimKey }> {
  const domain = normalizeDomainName(name);
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(domain)) {
    throw new AppError('invalid_domain', `not a domain name: ${name}`);
  }
  const pair = opts.ring ? await generateDkimKeyPair() : undefined;
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<Domain>(
      `INSERT INTO domains (instance_id, name) VALUES ($1, $2) ON CONFLICT (instance_id, name) DO NOTHING RETURNING ${COLUMNS}`,
      [tenant.instanceId, domain],
    );
    if (!rows[0]) throw new AppError('domain_already_exists', `domain ${domain} already exists in the instance`);
    if (!opts.ring || !pair) return rows[0];
    return { ...rows[0], dkim_key: await insertDkimKey(tenant, c, opts.ring, rows[0].id, pair) };
  });
}

export type DnsChecks = Partial<Record<'mx' | 'spf' | 'dkim' | 'dmarc', DnsCheckState>>;

/**
 * The operator override (`cartero domain set-checks`): writes check states without asking DNS,
 * for closed networks where the records cannot be resolved from the service. The DNS verifier
 * (dns-verify.ts) and its schedule overwrite them at its next run when DNS answers.
 */
export async function setDomainChecks(tenant: Tenant, pool: Pool, name: string, checks: DnsChecks): Promise<Domain> {
  for (const [check, state] of Object.entries(checks)) {
    if (state !== undefined && !DNS_CHECK_STATES.includes(state)) {
      throw new AppError('invalid_check_state', `${check} must be one of ${DNS_CHECK_STATES.join(', ')}`);
    }
  }
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Domain>(
      `UPDATE domains SET mx_status = coalesce($3, mx_status), spf_status = coalesce($4, spf_status),
              dkim_status = coalesce($5, dkim_status), dmarc_status = coalesce($6, dmarc_status),
              checks_overridden = true, updated_at = now()
        WHERE instance_id = $1 AND name = $2 AND NOT is_sandbox RETURNING ${COLUMNS}`,
      [tenant.instanceId, normalizeDomainName(name), checks.mx ?? null, checks.spf ?? null, checks.dkim ?? null, checks.dmarc ?? null],
    ),
  );
  if (!rows[0]) {
    if (await isSandbox(tenant, pool, name)) refuseSandbox({ name: normalizeDomainName(name), is_sandbox: true }, 'given check states');
    throw new NotFoundError('domain', name);
  }
  return rows[0];
}

async function isSandbox(tenant: Tenant, pool: Pool, name: string): Promise<boolean> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query('SELECT 1 FROM domains WHERE instance_id = $1 AND name = $2 AND is_sandbox', [tenant.instanceId, normalizeDomainName(name)]),
  );
  return rows.length > 0;
}
