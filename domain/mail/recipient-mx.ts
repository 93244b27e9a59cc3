import { promises as dnsPromises } from 'node:dns';
import { providerOfMx } from '../../engines/providers/mx.js';
import type { ProviderId } from '../../engines/providers/table.js';
import type { Pool } from '../../sql/pool.js';

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

const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

export function mxLookup(servers: readonly string[] | undefined, timeoutMs = 2_000): MxLookup {
  const resolver = new dnsPromises.Resolver({ timeout: timeoutMs, tries: 1 });
  if (servers?.length) resolver.setServers([...servers]);
  return async (domain) => {
    try {
      const records = await resolver.resolveMx(domain);
      // Most preferred first: providerOfMx takes the first host it knows.
      return { kind: 'found', hosts: records.sort((a, b) => a.priority - b.priority).map((r) => r.exchange) };
    } catch (err) {
      return ABSENT.has((err as NodeJS.ErrnoException).code ?? '') ? { kind: 'absent' } : { kind: 'unavailable' };
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
