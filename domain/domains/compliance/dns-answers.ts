import { DnsUnavailable, type DnsLookups, type Lookup } from '../dns-verify.js';

/**
 * A lookup's answer for a compliance check: found, absent, or `unavailable` when the resolver did
 * not answer. Unlike verification (dns-verify.ts, which then writes nothing and answers 503), a
 * report carries on: the checks that need that record say `unknown`, the others still answer.
 */
export type Answer = Lookup | { kind: 'unavailable' };

export async function ask(lookup: () => Promise<Lookup>): Promise<Answer> {
  try {
    return await lookup();
  } catch (err) {
    if (err instanceof DnsUnavailable) return { kind: 'unavailable' };
    throw err;
  }
}

/** The TXT records of a name starting with `prefix` (case-insensitive), e.g. `v=spf1`. */
export function recordsStarting(answer: Answer, prefix: RegExp): string[] {
  return answer.kind === 'found' ? answer.values.filter((v) => prefix.test(v.trim())) : [];
}

export type { DnsLookups };
