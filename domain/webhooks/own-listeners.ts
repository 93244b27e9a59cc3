import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { unwrapIPv4 } from './global-unicast.js';

/**
 * The service's own listeners (issue 24): its web and internal ports, the inbound SMTP listener,
 * and the Postgres, ClickHouse and SMTP relay (or mailbox simulator) it is configured with. A
 * webhook may never target one of them, whatever WEBHOOK_ALLOW_PRIVATE says: the embedded
 * ClickHouse answers SQL over HTTP, so a receiver URL on its port turned a webhook into a query
 * console whose answer came back in the delivery log.
 *
 * A receiver is one of them when its port is one of theirs and its host is this machine
 * (loopback, `localhost`, unspecified, an address of one of its interfaces), or when it is a
 * configured URL's host (by name, or an address that name resolves to) with that URL's port.
 * Derived once from the configuration of the process (`ownListeners`).
 */
export interface OwnListeners {
  /** Every port of ours: on this machine's addresses, each is refused. */
  ports: ReadonlySet<number>;
  /** Host (lower case, IPv6 without brackets) and port of each configured URL: refused as a pair. */
  endpoints: ReadonlyArray<{ host: string; port: number }>;
}

/** What ownListeners reads: the configuration's fields of the same names (config/schema.ts). */
export interface ListenerConfig {
  port: number;
  internalPort?: number | undefined;
  inboundSmtpPort?: number | undefined;
  databaseUrl?: string | undefined;
  clickhouseUrl?: string | undefined;
  smtpUrl?: string | undefined;
}

/** host and port a configured URL connects to, with each client's default port; undefined for a socket path or junk. */
function endpointOf(raw: string | undefined, defaultPort: (u: URL) => number): { host: string; port: number } | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  // pg reads ?host= and ?port= over the authority (a socket directory starts with /).
  const host = (url.searchParams.get('host') || url.hostname).replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (!host || host.startsWith('/')) return undefined;
  const port = Number(url.searchParams.get('port') || url.port) || defaultPort(url);
  return { host, port };
}

export function ownListeners(config: ListenerConfig): OwnListeners {
  const ports = new Set<number>();
  for (const p of [config.port, config.internalPort, config.inboundSmtpPort]) if (p) ports.add(p);
  const configured = [
    endpointOf(config.databaseUrl, () => 5432),
    endpointOf(config.clickhouseUrl, (u) => (u.protocol === 'https:' ? 443 : 80)),
    // nodemailer's defaults: 465 with TLS from the start (smtps), else 587.
    endpointOf(config.smtpUrl, (u) => (u.protocol === 'smtps:' ? 465 : 587)),
  ];
  const endpoints = configured.filter((e) => e !== undefined);
  for (const e of endpoints) ports.add(e.port);
  return { ports, endpoints };
}

/** True when connecting to this address reaches this machine: loopback, unspecified, or an interface's address. */
export function isThisMachine(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const a = ipaddr.process(address);
  const range = a.range();
  if (range === 'loopback' || range === 'unspecified') return true;
  return interfaceAddresses().has(a.toNormalizedString());
}

// The machine's interface addresses, normalized, read again after a minute: every delivery asks,
// and reading the interfaces is a system call per attempt otherwise, while they rarely change.
const INTERFACES_TTL_MS = 60_000;
let interfaces: { at: number; addresses: Set<string> } | undefined;

function interfaceAddresses(): Set<string> {
  const now = Date.now();
  if (interfaces && now - interfaces.at < INTERFACES_TTL_MS) return interfaces.addresses;
  const addresses = new Set<string>();
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) {
      const bare = i.address.split('%')[0]!;
      if (ipaddr.isValid(bare)) addresses.add(ipaddr.process(bare).toNormalizedString());
    }
  }
  interfaces = { at: now, addresses };
  return addresses;
}

/**
 * `address|port` of each configured endpoint, its host resolved; looked up again after a minute
 * (they are our own infrastructure's names, and may move).
 */
const RESOLVED_FOR_MS = 60_000;
const resolved = new WeakMap<OwnListeners, { at: number; pairs: Promise<Set<string>> }>();
const pair = (address: string, port: number) => `${ipaddr.process(address).toNormalizedString()}|${port}`;

function configuredPairs(own: OwnListeners): Promise<Set<string>> {
  const hit = resolved.get(own);
  if (hit && Date.now() - hit.at < RESOLVED_FOR_MS) return hit.pairs;
  const pairs = Promise.all(
    own.endpoints.map(({ host, port }) =>
      (isIP(host)
        ? Promise.resolve([host])
        : new Promise<string[]>((done) => dnsLookup(host, { all: true }, (err, list) => done(err ? [] : list.map((l) => l.address))))
      ).then((addresses) => addresses.filter((a) => ipaddr.isValid(a)).map((a) => pair(a, port))),
    ),
  ).then((lists) => new Set(lists.flat()));
  resolved.set(own, { at: Date.now(), pairs });
  return pairs;
}

/** By name: `localhost` on any port of ours, or a configured URL's host on its own port. */
export function ownListenerByName(own: OwnListeners, host: string, port: number): boolean {
  if (!own.ports.has(port)) return false;
  const h = host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || own.endpoints.some((e) => e.host === h && e.port === port);
}

/**
 * On every connection: the address connected to (and the IPv4 an IPv6 form of it carries, so
 * ::ffff:127.0.0.1 and ::127.0.0.1 count as loopback) and the port.
 */
export async function ownListenerAt(own: OwnListeners, address: string, port: number): Promise<boolean> {
  if (!own.ports.has(port)) return false;
  if (isThisMachine(address) || isThisMachine(unwrapIPv4(address))) return true;
  if (!ipaddr.isValid(address)) return false;
  const pairs = await configuredPairs(own);
  return pairs.has(pair(address, port)) || (ipaddr.isValid(unwrapIPv4(address)) && pairs.has(pair(unwrapIPv4(address), port)));
}
