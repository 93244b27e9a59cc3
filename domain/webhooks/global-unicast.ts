import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may reach with the guard on: global unicast only. An allow list, not
 * a block list: a block list let through what nobody thought of (`::7f00:1`, IPv4-compatible;
 * `::ffff:0:7f00:1`, IPv4-translated; `64:ff9b:1::/48`; 6to4; site-local `fec0::/10`).
 *
 * IPv4: ipaddr.js's `range()` is `unicast` (not loopback, private, link-local, CGNAT,
 * multicast, broadcast, 0/8, documentation, benchmarking, 240/4 and the other special ranges).
 * IPv6: inside 2000::/3 and `unicast` for ipaddr.js (not Teredo, 6to4, documentation, ORCHID,
 * AMT...), except the forms that carry an IPv4 address, which are judged by that IPv4:
 * IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96), the
 * NAT64 well-known prefix (64:ff9b::/96) and 6to4 (2002::/16, the IPv4 in bits 16-47). So
 * 2002:808:808:: (8.8.8.8 inside) passes, 2002:7f00:1:: (127.0.0.1) does not. Teredo
 * (2001::/32) obfuscates its IPv4 and the local-use NAT64 prefix (64:ff9b:1::/48) maps to
 * whatever the local network chose: both are refused.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = address.parts;
  const tail = (): ipaddr.IPv4 => new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  if (address.match(ipaddr.IPv6.parse('::ffff:0:0:0'), 96)) return tail();
  if (address.match(ipaddr.IPv6.parse('::'), 96)) return tail();
  if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return tail();
  if (address.match(ipaddr.IPv6.parse('2002::'), 16)) return new ipaddr.IPv4([p[1]! >> 8, p[1]! & 0xff, p[2]! >> 8, p[2]! & 0xff]);
  return undefined;
}

const GLOBAL_IPV6 = ipaddr.IPv6.parse('2000::');

export function isGlobalUnicast(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // A zone index (fe80::1%eth0) says link-local anyway.
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const inner = embeddedIPv4(v6);
  if (inner) return inner.range() === 'unicast';
  return v6.match(GLOBAL_IPV6, 3) && v6.range() === 'unicast';
}

/** The IPv4 an IPv6 address carries (see above), as text; any other address unchanged. */
export function unwrapIPv4(address: string): string {
  if (!ipaddr.IPv6.isValid(address)) return address;
  return embeddedIPv4(ipaddr.IPv6.parse(address))?.toString() ?? address;
}
