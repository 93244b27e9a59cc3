import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Webhook receivers must be public hosts (server-side request forgery: a tenant could otherwise
 * make the worker call the metadata service, Postgres or an admin port). Checked when a webhook
 * is created or its url changes, and again on every connection (`guardedLookup`): the check runs
 * on the very addresses the socket connects to, so a DNS answer that changes between the two
 * (DNS rebinding) is caught. WEBHOOK_ALLOW_PRIVATE=true lifts it (the embedded default and the
 * tests, whose receivers are on loopback).
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** True for loopback, private, link-local, CGNAT, multicast, documentation and reserved addresses. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
    return BLOCKED.check(address, 'ipv6');
  }
  return true;
}

export class ReceiverRefused extends Error {
  constructor(readonly address: string) {
    super(`receiver address ${address} is private, loopback or link-local (WEBHOOK_ALLOW_PRIVATE is not set)`);
  }
}

/** The URL's host as an IP literal, without IPv6 brackets; undefined for a name. */
function literalHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : undefined;
}

/**
 * Resolve the URL's host and refuse it if any address is not public. undefined when allowed;
 * otherwise the reason. A name that does not resolve is refused too (it could not be called).
 */
export async function refusedReceiver(url: URL): Promise<string | undefined> {
  const literal = literalHost(url);
  if (literal) return isNonPublicAddress(literal) ? `address ${literal} is not public` : undefined;
  try {
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(url.hostname, { all: true, verbatim: true }, (err, list) => (err ? reject(err) : resolve(list))),
    );
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    return bad ? `${url.hostname} resolves to ${bad.address}, which is not public` : undefined;
  } catch (err) {
    return `${url.hostname} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
}

/** A literal IP host checked before connecting (sockets skip the lookup for literals). */
export function refusedLiteral(url: URL): string | undefined {
  const literal = literalHost(url);
  return literal && isNonPublicAddress(literal) ? literal : undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves, then refuses the connection if any resolved address
 * is not public: the addresses checked are the addresses connected to.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, list) => {
    if (err) return callback(err, []);
    const bad = list.find((a) => isNonPublicAddress(a.address));
    if (bad) return callback(Object.assign(new ReceiverRefused(bad.address), { code: 'ERECEIVERREFUSED' }), []);
    if (options.all) return callback(null, list);
    const first = list[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
