import { promises as dnsPromises } from 'node:dns';
import { AppError, NotFoundError } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { liveKeys, type DkimKey } from './dkim-keys.js';
import { dkimRecordName, returnPathHost, spfMechanism, type DnsSettings } from './dns-records.js';
import type { DnsCheckState } from './check-states.js';
import { normalizeDomainName } from './domain-name.js';
import type { Domain } from './domains.js';
import { refuseSandbox } from './sandbox.js';

/**
 * Domain verification against real DNS (`cartero domain verify`, the scheduled job
 * workers/jobs/domain-verify.ts): the records of dns-records.ts are resolved through DNS_SERVERS
 * (node's resolver, c-ares: real UDP/TCP queries) and each check moves:
 *
 *   record as expected                     -> approved
 *   record present but not as expected     -> failed
 *   no record (NXDOMAIN, no data)          -> failed, or pending while it has never been
 *                                             anything but pending (not yet published)
 *
 * so a verified domain whose records disappear becomes failed, and its senders' mail is refused
 * (409 domain_sender_not_verified) and dropped at send (sender_domain_unverified).
 *
 * A resolver that does not answer (timeout, refused, SERVFAIL) is not a verdict: nothing is
 * written, and the caller gets 503 "DNS verification temporarily unavailable". All lookups of a
 * domain are made before anything is written, so a check is never half applied.
 */
export type Lookup = { kind: 'found'; values: string[] } | { kind: 'absent' };

export interface DnsLookups {
  txt(name: string): Promise<Lookup>;
  mx(name: string): Promise<Lookup>;
}

export class DnsUnavailable extends AppError {
  constructor(readonly reason: unknown) {
    super('service_unavailable', 'DNS verification temporarily unavailable');
  }
}

// NXDOMAIN and NOERROR-without-answers: the zone answered that there is no such record.
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

/** Lookups through node's resolver, DNS_SERVERS when set (IP or IP:port), else the system's. */
export function resolverLookups(servers: readonly string[] | undefined, opts: { timeoutMs?: number; tries?: number } = {}): DnsLookups {
  const resolver = new dnsPromises.Resolver({ timeout: opts.timeoutMs ?? 2_000, tries: opts.tries ?? 2 });
  if (servers?.length) resolver.setServers([...servers]);
  const ask = async (query: () => Promise<string[]>): Promise<Lookup> => {
    try {
      return { kind: 'found', values: await query() };
    } catch (err) {
      if (ABSENT.has((err as NodeJS.ErrnoException).code ?? '')) return { kind: 'absent' };
      throw new DnsUnavailable(err);
    }
  };
  return {
    // A TXT record's character strings make one value (a 2048-bit key needs two of 255 bytes).
    txt: (name) => ask(async () => (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''))),
    // Most preferred first (the provider attribution takes the first host it knows).
    mx: (name) => ask(async () => (await resolver.resolveMx(name)).sort((a, b) => a.priority - b.priority).map((m) => m.exchange)),
  };
}

type Verdict = 'ok' | 'wrong' | 'absent';

export function nextState(current: DnsCheckState, verdict: Verdict): DnsCheckState {
  if (verdict === 'ok') return 'approved';
  if (verdict === 'wrong') return 'failed';
  return current === 'pending' ? 'pending' : 'failed';
}

const bareHost = (h: string) => h.trim().toLowerCase().replace(/\.$/, '');

function mxVerdict(found: Lookup, settings: DnsSettings): Verdict {
  if (found.kind === 'absent' || !found.values.length) return 'absent';
  return found.values.some((h) => bareHost(h) === bareHost(settings.mxHost)) ? 'ok' : 'wrong';
}

/** RFC 7208 3.2: more than one v=spf1 record is a permanent error, so it fails the check. */
function spfVerdict(found: Lookup, settings: DnsSettings): Verdict {
  const records = found.kind === 'found' ? found.values.filter((v) => /^v=spf1(\s|$)/i.test(v.trim())) : [];
  if (!records.length) return 'absent';
  if (records.length > 1) return 'wrong';
  const want = spfMechanism(settings).toLowerCase();
  const terms = records[0]!.trim().toLowerCase().split(/\s+/);
  return terms.some((t) => t === want || t === `+${want}`) ? 'ok' : 'wrong';
}

/** RFC 7489 6.6.3: exactly one record starting v=DMARC1, with a valid p= policy. */
function dmarcVerdict(found: Lookup): Verdict {
  const records = found.kind === 'found' ? found.values.filter((v) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(v.trim())) : [];
  if (!records.length) return 'absent';
  if (records.length > 1) return 'wrong';
  return /(^|;)\s*p\s*=\s*(none|quarantine|reject)\s*(;|$)/i.test(records[0]!) ? 'ok' : 'wrong';
}

/** The key's record carries this public key (p=, whitespace ignored); a revoked or other key fails. Also the compliance report's (compliance/dkim.ts). */
export function dkimVerdict(found: Lookup, publicKey: string): Verdict {
  const records = found.kind === 'found' ? found.values : [];
  if (!records.length) return 'absent';
  const has = records.some((r) => {
    const p = /(?:^|;)\s*p\s*=([^;]*)/i.exec(r);
    return p !== null && p[1]!.replace(/\s+/g, '') === publicKey;
  });
  return has ? 'ok' : 'wrong';
}

/**
 * The domain's dkim_status from its live keys' states. A domain without a key (added before keys
 * existed) has nothing Cartero could sign with, so no record can verify: as if absent.
 */
function domainDkimState(current: DnsCheckState, keys: ReadonlyArray<{ status: DnsCheckState }>): DnsCheckState {
  if (!keys.length) return nextState(current, 'absent');
  if (keys.some((k) => k.status === 'approved')) return 'approved';
  if (keys.some((k) => k.status === 'failed')) return 'failed';
  return 'pending';
}

type Checks = Pick<Domain, 'mx_status' | 'spf_status' | 'dkim_status' | 'dmarc_status'>;
type DomainRow = Pick<Domain, 'id' | 'domain'> & Checks;

export type VerifyResult = Pick<Domain, 'domain' | 'is_verified'> &
  Checks & {
    /** Keys retired because a newer key of the domain verified. */
    retired_selectors: string[];
  };

/** Resolves a domain's records and writes the checks; throws DnsUnavailable (503) writing nothing. */
export async function verifyDomain(tenant: Tenant, pool: Pool, name: string, dns: DnsLookups, settings: DnsSettings): Promise<VerifyResult> {
  const domainName = normalizeDomainName(name);
  const read = await withTenant(pool, tenant, async (c) => {
    const d = await c.query<DomainRow & { is_sandbox: boolean }>(
      'SELECT id::int, name AS domain, mx_status, spf_status, dkim_status, dmarc_status, is_sandbox FROM domains WHERE instance_id = $1 AND name = $2',
      [tenant.instanceId, domainName],
    );
    return d.rows[0] ? { domain: d.rows[0], keys: await liveKeys(tenant, c, d.rows[0].id) } : undefined;
  });
  if (!read) throw new NotFoundError('domain', name);
  refuseSandbox({ name: domainName, is_sandbox: read.domain.is_sandbox }, 'verified through DNS');
  const { domain, keys } = read;
  const host = returnPathHost(domainName, settings);

  // Every lookup before any write: one that does not answer leaves the domain as it was.
  const [mx, spf, dmarc, ...dkim] = await Promise.all([
    dns.mx(host),
    dns.txt(host),
    dns.txt(`_dmarc.${domainName}`),
    ...keys.map((k) => dns.txt(dkimRecordName(domainName, k.selector))),
  ]);
  const keyStates = keys.map((k, i): DkimKey => ({ ...k, status: nextState(k.status, dkimVerdict(dkim[i]!, k.public_key)) }));
  // Keys older than the newest verified one are superseded: it signs from now on.
  const newestApproved = keyStates.find((k) => k.status === 'approved');
  const retired = newestApproved ? keyStates.filter((k) => k.id < newestApproved.id) : [];
  const live = keyStates.filter((k) => !retired.includes(k));
  const states = {
    mx_status: nextState(domain.mx_status, mxVerdict(mx!, settings)),
    spf_status: nextState(domain.spf_status, spfVerdict(spf!, settings)),
    dkim_status: domainDkimState(domain.dkim_status, live),
    dmarc_status: nextState(domain.dmarc_status, dmarcVerdict(dmarc!)),
  };

  return withTenant(pool, tenant, async (c) => {
    await c.query(
      `UPDATE dkim_keys k SET status = x.status, retired_at = CASE WHEN x.retire THEN now() ELSE k.retired_at END
         FROM unnest($2::bigint[], $3::text[], $4::boolean[]) AS x(id, status, retire)
        WHERE k.instance_id = $1 AND k.id = x.id`,
      [tenant.instanceId, keyStates.map((k) => k.id), keyStates.map((k) => k.status), keyStates.map((k) => retired.includes(k))],
    );
    const { rows } = await c.query<VerifyResult>(
      `UPDATE domains SET mx_status = $3, spf_status = $4, dkim_status = $5, dmarc_status = $6, dns_checked_at = now(),
              checks_overridden = false, updated_at = now()
        WHERE instance_id = $1 AND id = $2
        RETURNING name AS domain, is_verified, mx_status, spf_status, dkim_status, dmarc_status`,
      [tenant.instanceId, domain.id, states.mx_status, states.spf_status, states.dkim_status, states.dmarc_status],
    );
    if (!rows[0]) throw new NotFoundError('domain', name);
    return { ...rows[0], retired_selectors: retired.map((k) => k.selector) };
  });
}

/**
 * The scheduled check of every domain of every instance, oldest check first, except those whose
 * checks the operator set by hand (`domain set-checks`: closed networks) until `domain verify`. A resolver that does
 * not answer ends the run (the next tick tries again); nothing it did not check is changed.
 */
export async function verifyAllDomains(
  pool: Pool,
  dns: DnsLookups,
  settings: DnsSettings,
  tenants: (ids: number[]) => Promise<Map<number, Tenant>>,
): Promise<{ checked: number; unavailable: boolean; changed: VerifyResult[] }> {
  // The service role reads across instances; each domain is then checked in its tenant's context.
  const { rows } = await pool.query<{ instance_id: number; name: string; was_verified: boolean }>(
    'SELECT instance_id::int, name, is_verified AS was_verified FROM domains WHERE NOT checks_overridden AND NOT is_sandbox ORDER BY dns_checked_at NULLS FIRST, id',
  );
  const byId = await tenants([...new Set(rows.map((r) => r.instance_id))]);
  const changed: VerifyResult[] = [];
  let checked = 0;
  for (const row of rows) {
    const tenant = byId.get(row.instance_id);
    if (!tenant) continue;
    try {
      const result = await verifyDomain(tenant, pool, row.name, dns, settings);
      checked++;
      if (result.is_verified !== row.was_verified) changed.push(result);
    } catch (err) {
      if (err instanceof DnsUnavailable) return { checked, unavailable: true, changed };
      if (err instanceof NotFoundError) continue; // deleted meanwhile
      throw err;
    }
  }
  return { checked, unavailable: false, changed };
}
