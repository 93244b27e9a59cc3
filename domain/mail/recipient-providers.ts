import { isLookupWorthy } from '../../engines/providers/mx.js';
import { providerOfDomain, type ProviderId } from '../../engines/providers/table.js';
import { PROVIDER_MX_QUEUE, type ProviderMxJob } from '../job-queue.js';
import type { Client } from '../../sql/pool.js';

/**
 * The mailbox provider of each recipient of a send, at acceptance (docs/deliverability.md,
 * "Providers"): by the domain's name for the consumer domains (engines/providers/table.ts), else
 * by the MX verdict cached in recipient_domains (sql/migrations/032_mail_providers.sql), else
 * 'other'. Never waits for DNS: a domain met for the first time gets its row and a resolve job
 * (returned, for the caller's transaction), and its mails count as 'other' until the worker has
 * looked it up; an expired verdict is still used while its refresh is queued.
 */
export interface RecipientProviders {
  /** One per recipient, in order. */
  providers: ProviderId[];
  /** Resolve jobs to enqueue with the mails. */
  jobs: Array<{ name: string; data: ProviderMxJob }>;
}

export const recipientDomain = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

export async function recipientProviders(c: Client, emails: readonly string[]): Promise<RecipientProviders> {
  const domains = emails.map(recipientDomain);
  const byName = domains.map((d) => providerOfDomain(d));
  const wanted = [...new Set(domains.filter((d, i) => !byName[i] && isLookupWorthy(d)))].sort();
  const cached = new Map<string, ProviderId | null>();
  const toLookUp: string[] = [];
  if (wanted.length) {
    const found = await c.query<{ domain: string; provider: ProviderId | null; stale: boolean }>({
      name: 'recipient_domains_read',
      text: `SELECT domain, provider, (expires_at < now() AND NOT refresh_wanted) AS stale FROM recipient_domains WHERE domain = ANY($1::text[])`,
      values: [wanted],
    });
    for (const r of found.rows) cached.set(r.domain, r.provider);
    const missing = wanted.filter((d) => !cached.has(d));
    if (missing.length) {
      // Sorted, so two sends meeting the same new domains wait for each other in one order.
      const inserted = await c.query<{ domain: string }>(
        'INSERT INTO recipient_domains (domain) SELECT unnest($1::text[]) ON CONFLICT (domain) DO NOTHING RETURNING domain',
        [missing],
      );
      toLookUp.push(...inserted.rows.map((r) => r.domain));
    }
    const stale = found.rows.filter((r) => r.stale).map((r) => r.domain);
    if (stale.length) {
      const flagged = await c.query<{ domain: string }>(
        'UPDATE recipient_domains SET refresh_wanted = true WHERE domain = ANY($1::text[]) AND NOT refresh_wanted RETURNING domain',
        [stale],
      );
      toLookUp.push(...flagged.rows.map((r) => r.domain));
    }
  }
  return {
    providers: domains.map((d, i) => byName[i] ?? cached.get(d) ?? 'other'),
    jobs: toLookUp.map((domain) => ({ name: PROVIDER_MX_QUEUE, data: { domain } })),
  };
}
