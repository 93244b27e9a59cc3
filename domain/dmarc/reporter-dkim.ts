import { promises as dnsPromises } from 'node:dns';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';

/**
 * Whether a report mail passed DKIM for its reporter's domain (`reporter_authenticated`):
 * aggregate reports are unsigned by nature (RFC 7489 §7.1 has them from anyone who can reach the
 * MX), so a user is told which ones a reporter vouched for. True when a DKIM signature of the mail
 * verifies (mailauth) and its signing domain aligns, relaxed, with the mail's From domain.
 *
 * What it may cost: each signature is one TXT lookup of `<selector>._domainkey.<d=>` through
 * DNS_SERVERS (else the system resolver), bounded in time. A mail with more signatures than
 * MAX_SIGNATURES, or none aligned with its From, is judged without any lookup (false): a stranger
 * cannot make the listener query names at will (docs/security.md, "What leaves the machine").
 */
export const MAX_SIGNATURES = 3;
const LOOKUP_TIMEOUT_MS = 2_000;

export type TxtResolver = NonNullable<NonNullable<Parameters<typeof dkimVerify>[1]>['resolver']>;

/** A resolver for mailauth: DNS_SERVERS when set (IP or IP:port), else the system's; one try, bounded. */
export function dkimResolver(servers: readonly string[] | undefined): TxtResolver {
  const resolver = new dnsPromises.Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 1 });
  if (servers?.length) resolver.setServers([...servers]);
  return (name, type) => resolver.resolve(name, type as 'TXT') as ReturnType<TxtResolver>;
}

/** The signing domains (`d=`) of a mail's DKIM-Signature headers, from its raw header block. */
function signingDomains(raw: Buffer): { signatures: number; domains: string[] } {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end < 0 ? Math.min(raw.length, 256 * 1024) : end).toString('latin1').replace(/\r?\n[ \t]+/g, ' ');
  const headers = head.split(/\r?\n/).filter((h) => /^(?:dkim-signature|arc-message-signature)\s*:/i.test(h));
  return { signatures: headers.length, domains: headers.map((h) => /[;:\s]d\s*=\s*([^;\s]+)/i.exec(h)?.[1]?.toLowerCase() ?? '') };
}

/** Relaxed alignment as far as it can be judged without the public suffix list: one name under the other. */
function related(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}

export async function reporterAuthenticated(raw: Buffer, fromDomain: string | undefined, resolver: TxtResolver): Promise<boolean> {
  if (!fromDomain) return false;
  const { signatures, domains } = signingDomains(raw);
  if (!signatures || signatures > MAX_SIGNATURES || !domains.some((d) => related(d, fromDomain))) return false;
  try {
    const { results } = await dkimVerify(raw, { resolver });
    return results.some((r) => r.status?.result === 'pass' && !!r.status.aligned);
  } catch {
    return false;
  }
}
