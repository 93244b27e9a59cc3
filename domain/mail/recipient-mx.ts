import { providerOfMx } from '../../engines/providers/mx.js';
import type { ProviderId } from '../../engines/providers/table.js';
import type { Pool } from '../../sql/pool.js';
import { DnsUnavailable, resolverLookups } from '../domains/dns-verify.js';

/**
 * The worker's side of recipient_domains (sql/migrations/032_mail_providers.sql): look a domain's
 * MX up and record which provider receives its mail (engines/providers/mx.ts). Through DNS_SERVERS
 * when set, else the system resolver; one try of 2 s, so a silent resolver holds a job 2 s, never
 * a send.
 *
 * How long a verdict holds: a day when the zone answered (MX found, or no MX: 'other'), 15
 * minutes when the resolver did not answer (the old verdict, if any, stays; the next send to the
 * domain after that asks again). Node's resolver gives no record TTLs for MX, and a day is what
 * a mail host's move takes to matter in daily figures.
 */
export const VERDICT_TTL_SECONDS = 86_400;
export const RETRY_AFTER_SECONDS = 900;

export type MxLookup = (domain: string) => Promise<{ kind: 'found'; hosts: string[] } | { kind: 'absent' } | { kind: 'unavailable' }>;

/** MX lookups through the resolver domain verification uses (dns-verify.ts), one try of timeoutMs. */
export function mxLookup(servers: readonly string[] | undefined, timeoutMs = 2_000): MxLookup {
  const dns = resolverLookups(servers, { timeoutMs, tries: 1 });
  return async (domain) => {
    try {
      const answer = await dns.mx(domain);
      return answer.kind === 'found' ? { kind: 'found', hosts: answer.values } : answer;
    } catch (err) {
      if (err instanceof DnsUnavailable) return { kind: 'unavailable' };
      throw err;
    }
  };
}

/** Look the domain up and store the verdict; returns it (null when the resolver did not answer). */
export async function resolveRecipientDomain(pool: Pool, lookup: MxLookup, domain: string): Promise<ProviderId | null> {
  const answer = await lookup(domain);
  const provider = answer.kind === 'found' ? providerOfMx(answer.hosts) : answer.kind === 'absent' ? 'other' : null;
  await pool.query(
    `UPDATE recipient_domains
        SET provider = coalesce($2, provider), resolved_at = CASE WHEN $2::text IS NULL THEN resolved_at ELSE now() END,
            expires_at = now() + make_interval(secs => $3), refresh_wanted = false
      WHERE domain = $1`,
    [domain, provider, provider === null ? RETRY_AFTER_SECONDS : VERDICT_TTL_SECONDS],
  );
  return provider;
}

/** Verdicts nobody asked for in the 30 days after they expired: the domains no longer sent to. */
export async function purgeRecipientDomains(pool: Pool): Promise<number> {
  const r = await pool.query(`DELETE FROM recipient_domains WHERE expires_at < now() - interval '30 days' AND NOT refresh_wanted`);
  return r.rowCount ?? 0;
}
