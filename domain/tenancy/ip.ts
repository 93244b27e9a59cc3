import ipaddr from 'ipaddr.js';
import { AppError } from '../errors.js';

/**
 * Allow-list entries are stored as Postgres cidr and matched in SQL (`addr <<= ANY(list)`).
 * Operators write bare addresses and networks with host bits set; Postgres rejects the latter,
 * so both are normalized here to the network they name.
 */
export function normalizeCidr(raw: string): string {
  const value = raw.trim();
  try {
    if (!value.includes('/')) {
      const addr = ipaddr.process(value);
      return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
    }
    const [addr, bits] = ipaddr.parseCIDR(value);
    if (addr.kind() === 'ipv4') return `${ipaddr.IPv4.networkAddressFromCIDR(value).toString()}/${bits}`;
    const v6 = addr as ipaddr.IPv6;
    // Callers are compared as plain IPv4 (clientAddress), so an IPv4-mapped network
    // (::ffff:a.b.c.d/104) is stored as the IPv4 network it names, or it could never match.
    if (v6.isIPv4MappedAddress() && bits >= 96) {
      const v4 = v6.toIPv4Address().toString();
      return `${ipaddr.IPv4.networkAddressFromCIDR(`${v4}/${bits - 96}`).toString()}/${bits - 96}`;
    }
    return `${ipaddr.IPv6.networkAddressFromCIDR(value).toString()}/${bits}`;
  } catch {
    throw new AppError('invalid_cidr', `not an IP address or CIDR: ${raw}`);
  }
}

/** The caller's address as Postgres inet text; IPv4-mapped IPv6 (::ffff:a.b.c.d) as plain IPv4. */
export function clientAddress(raw: string | undefined): string | null {
  if (!raw || !ipaddr.isValid(raw)) return null;
  return ipaddr.process(raw).toString();
}
