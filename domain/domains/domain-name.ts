// Its own module: the domain rows (domains.ts), their DKIM keys (dkim-keys.ts), the DNS verifier
// and the senders all compare names the same way, without importing each other.

/** Domain names compare case-insensitively and without a trailing dot. */
export function normalizeDomainName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}
