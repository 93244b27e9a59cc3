import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { isIP } from 'node:net';

/**
 * A preload (`NODE_OPTIONS=--import=<this file>`) that records every connection attempt and name
 * lookup a Node process makes, before it is made, as one JSON line in CARTERO_NET_WATCH_FILE:
 * how a test proves that the service, its dynos and the CLI try nothing outside loopback (issue
 * 37). It observes; it blocks nothing. Attempts, not successes: a connect to an address this
 * machine cannot route is recorded all the same (the suite also runs in a loopback-only network
 * namespace, where such a connect fails instead of leaving).
 *
 * Covered: net/tls sockets (http, https, fetch/undici, SMTP, pg, ClickHouse all connect through
 * net.Socket), dgram sends, dns.lookup (getaddrinfo) and every resolve* of dns and dns.promises
 * Resolvers, with the servers they would ask. Not covered: processes that are not Node
 * (Postgres, ClickHouse, curl), which the network namespace covers.
 */

export interface NetAttempt {
  pid: number;
  kind: 'connect' | 'udp' | 'lookup' | 'resolve';
  host?: string;
  port?: number | string;
  path?: string;
  /** The DNS servers a resolve would ask. */
  servers?: string[];
}

const file = process.env.CARTERO_NET_WATCH_FILE;

function record(a: Omit<NetAttempt, 'pid'>): void {
  try {
    appendFileSync(file!, JSON.stringify({ pid: process.pid, ...a }) + '\n');
  } catch {
    // never let the watch break what it watches
  }
}

if (file) {
  const require = createRequire(import.meta.url);
  const net = require('node:net') as typeof import('node:net');
  const dgram = require('node:dgram') as typeof import('node:dgram');
  const dns = require('node:dns') as typeof import('node:dns');

  const connect = net.Socket.prototype.connect as (...args: any[]) => any;
  net.Socket.prototype.connect = function (this: unknown, ...args: any[]) {
    // net.connect() hands over its normalized arguments as an array whose first item is the options.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    if (first && typeof first === 'object') record({ kind: 'connect', host: first.path ? undefined : (first.host ?? 'localhost'), port: first.port, path: first.path });
    else if (typeof first === 'number' || /^\d+$/.test(String(first))) record({ kind: 'connect', host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first });
    else record({ kind: 'connect', path: String(first) });
    return connect.apply(this, args);
  } as typeof net.Socket.prototype.connect;

  const send = dgram.Socket.prototype.send as (...args: any[]) => any;
  dgram.Socket.prototype.send = function (this: unknown, ...args: any[]) {
    const hostAt = args.findIndex((a, i) => i > 0 && typeof a === 'string');
    const portAt = args.findIndex((a, i) => i > 0 && typeof a === 'number' && (typeof args[i + 1] === 'string' || typeof args[i + 1] === 'function' || args[i + 1] === undefined));
    record({ kind: 'udp', host: hostAt >= 0 ? args[hostAt] : undefined, port: portAt >= 0 ? args[portAt] : undefined });
    return send.apply(this, args);
  } as typeof dgram.Socket.prototype.send;

  const lookup = dns.lookup as (...args: any[]) => any;
  (dns as any).lookup = function (...args: any[]) {
    record({ kind: 'lookup', host: String(args[0]) });
    return lookup.apply(this, args);
  };
  const lookupPromise = dns.promises.lookup as (...args: any[]) => any;
  (dns.promises as any).lookup = function (...args: any[]) {
    record({ kind: 'lookup', host: String(args[0]) });
    return lookupPromise.apply(this, args);
  };
  for (const proto of [dns.Resolver.prototype, dns.promises.Resolver.prototype] as any[]) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (!/^(resolve|reverse)/.test(name) || typeof proto[name] !== 'function') continue;
      const original = proto[name];
      proto[name] = function (this: { getServers(): string[] }, ...args: any[]) {
        record({ kind: 'resolve', host: String(args[0]), servers: this.getServers() });
        return original.apply(this, args);
      };
    }
  }
  // The module-level resolve* functions use a default Resolver whose methods are bound at load:
  // wrap them too (with the default servers).
  for (const target of [dns, dns.promises] as any[]) {
    for (const name of Object.keys(target)) {
      if (!/^(resolve|reverse)/.test(name) || typeof target[name] !== 'function') continue;
      const original = target[name];
      target[name] = function (...args: any[]) {
        record({ kind: 'resolve', host: String(args[0]), servers: dns.getServers() });
        return original.apply(this, args);
      };
    }
  }
  // ESM named imports of node:dns (`import { lookup } from 'node:dns'`) read the patched functions.
  syncBuiltinESMExports();
}

/** The NODE_OPTIONS value that loads this watch into a child process. */
export function netWatchNodeOptions(): string {
  return `--import=${import.meta.url}`;
}

const loopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** True for a loopback address or name (127.0.0.0/8, ::1, the IPv4-mapped forms, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (loopbackName(h.toLowerCase())) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./i.test(h) || /^(0:){5}ffff:7f/i.test(h);
  return false;
}

/** The address of a DNS server as getServers() gives it: `1.2.3.4`, `1.2.3.4:53`, `::1`, `[::1]:53`. */
function serverHost(s: string): string {
  const bracketed = /^\[(.*)\]/.exec(s);
  if (bracketed) return bracketed[1]!;
  return isIP(s) ? s : s.replace(/:\d+$/, '');
}

/**
 * The recorded attempts that would leave this machine: any connect or send not to loopback, any
 * lookup of a name other than localhost, and any DNS query not to one of `ownDnsServers` (a test's
 * own DNS server): a resolver on loopback (systemd-resolved's 127.0.0.53, a local dnsmasq) still
 * forwards what it does not know, so its being on loopback proves nothing.
 */
export function outsideAttempts(watchFile: string, ownDnsServers: readonly string[] = []): NetAttempt[] {
  let text = '';
  try {
    text = readFileSync(watchFile, 'utf8');
  } catch {
    return [];
  }
  const all = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as NetAttempt);
  return all.filter((a) => {
    if (a.path !== undefined) return false; // a Unix socket
    if (a.kind === 'resolve') return !(a.servers ?? []).every((s) => ownDnsServers.includes(s) || ownDnsServers.includes(serverHost(s)));
    // A lookup of an IP literal asks nobody (its connect is recorded on its own); of a name other
    // than localhost, the system resolver.
    if (a.kind === 'lookup') return !a.host || (isIP(a.host) === 0 && !isLoopback(a.host));
    return !(a.host && isLoopback(a.host));
  });
}

/** How many attempts were recorded at all (a watch that saw nothing proves nothing). */
export function recordedAttempts(watchFile: string): number {
  try {
    return readFileSync(watchFile, 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}
