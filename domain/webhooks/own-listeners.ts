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
 * (loopback, unspecified, an address of one of its interfaces) or the host a configured URL
 * names. Derived once from the configuration of the process (`ownListeners`).
 */
export interface OwnListeners {
  ports: ReadonlySet<number>;
  /** Hosts of the configured URLs, lower case, IPv6 without brackets. */
  hosts: ReadonlySet<string>;
}

/** What ownListeners reads: the configuration's fields of the same names (runtime/config-schema.ts). */
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
  const hosts = new Set<string>();
  for (const p of [config.port, config.internalPort, config.inboundSmtpPort]) if (p) ports.add(p);
  const endpoints = [
    endpointOf(config.databaseUrl, () => 5432),
    endpointOf(config.clickhouseUrl, (u) => (u.protocol === 'https:' ? 443 : 80)),
    // nodemailer's defaults: 465 with TLS from the start (smtps), else 587.
    endpointOf(config.smtpUrl, (u) => (u.protocol === 'smtps:' ? 465 : 587)),
  ];
  for (const e of endpoints) {
    if (!e) continue;
    ports.add(e.port);
    hosts.add(e.host);
  }
  return { ports, hosts };
}

/** True when connecting to this address reaches this machine: loopback, unspecified, or an interface's address. */
export function isThisMachine(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const a = ipaddr.process(address);
  const range = a.range();
  if (range === 'loopback' || range === 'unspecified') return true;
  const norm = a.toNormalizedString();
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((i) => ipaddr.isValid(i.address.split('%')[0]!) && ipaddr.process(i.address.split('%')[0]!).toNormalizedString() === norm),
  );
}

/** Addresses the configured hosts resolve to, looked up again after a minute (they are our own infrastructure's names). */
const RESOLVED_FOR_MS = 60_000;
const resolved = new WeakMap<OwnListeners, { at: number; addresses: Promise<Set<string>> }>();

function configuredAddresses(own: OwnListeners): Promise<Set<string>> {
  const hit = resolved.get(own);
  if (hit && Date.now() - hit.at < RESOLVED_FOR_MS) return hit.addresses;
  const addresses = Promise.all(
    [...own.hosts].map((host) =>
      isIP(host)
        ? Promise.resolve([host])
        : new Promise<string[]>((done) => dnsLookup(host, { all: true }, (err, list) => done(err ? [] : list.map((l) => l.address)))),
    ),
  ).then((lists) => new Set(lists.flat().filter((a) => ipaddr.isValid(a)).map((a) => ipaddr.process(a).toNormalizedString())));
  resolved.set(own, { at: Date.now(), addresses });
  return addresses;
}

/** At creation: the URL's host and port, by name (the host a configured URL names, `localhost`) and by address. */
export function ownListenerByName(own: OwnListeners, host: string, port: number): boolean {
  if (!own.ports.has(port)) return false;
  const h = host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || own.hosts.has(h);
}

/**
 * On every connection: the address connected to (and the IPv4 an IPv6 form of it carries, so
 * ::ffff:127.0.0.1 and ::127.0.0.1 count as loopback) and the port.
 */
export async function ownListenerAt(own: OwnListeners, address: string, port: number): Promise<boolean> {
  if (!own.ports.has(port)) return false;
  if (isThisMachine(address) || isThisMachine(unwrapIPv4(address))) return true;
  if (!ipaddr.isValid(address)) return false;
  return (await configuredAddresses(own)).has(ipaddr.process(address).toNormalizedString());
}
