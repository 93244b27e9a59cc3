import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { isGlobalUnicast } from './global-unicast.js';
import { ownListenerAt, ownListenerByName, ownListeners, type ListenerConfig, type OwnListeners } from './own-listeners.js';

/**
 * Webhook receivers must be public hosts (server-side request forgery: a tenant could otherwise
 * make the worker call the metadata service, Postgres or an admin port), and never one of the
 * service's own listeners (own-listeners.ts). Checked when a webhook is created or its url
 * changes, and again on every connection (`receiverLookup`): the check runs on the very
 * addresses the socket connects to, so a DNS answer that changes between the two (DNS
 * rebinding) is caught. WEBHOOK_ALLOW_PRIVATE=true, set explicitly by the operator (or a test),
 * lifts the public-address rule; the own-listener rule holds whatever it says.
 */
export interface ReceiverPolicy {
  /** WEBHOOK_ALLOW_PRIVATE: loopback, private and link-local receivers allowed. */
  allowPrivate: boolean;
  own: OwnListeners;
}

const policies = new WeakMap<object, ReceiverPolicy>();

/** The policy of a process's configuration, derived once per configuration object. */
export function receiverPolicy(config: ListenerConfig & { webhooks: { allowPrivate: boolean } }): ReceiverPolicy {
  let p = policies.get(config);
  if (!p) policies.set(config, (p = { allowPrivate: config.webhooks.allowPrivate, own: ownListeners(config) }));
  return p;
}

/** True for anything but global unicast (global-unicast.ts). */
export function isNonPublicAddress(address: string): boolean {
  return !isGlobalUnicast(address);
}

export class ReceiverRefused extends Error {
  constructor(reason: string) {
    super(reason);
  }
}

/** The port a receiver URL connects to. */
export const portOf = (url: URL): number => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/** The URL's host as an IP literal, without IPv6 brackets; undefined for a name. */
function literalHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : undefined;
}

const OWN = "is one of the service's own listeners";

/** Why this address and port may not be connected to; undefined when they may. */
async function refusedAddress(address: string, port: number, policy: ReceiverPolicy): Promise<string | undefined> {
  if (await ownListenerAt(policy.own, address, port)) return `address ${address} port ${port} ${OWN}`;
  if (!policy.allowPrivate && !isGlobalUnicast(address)) return `address ${address} is not public`;
  return undefined;
}

/**
 * At creation and url change: the URL's host by name, then its addresses (a name is resolved).
 * undefined when allowed; otherwise the reason. Without WEBHOOK_ALLOW_PRIVATE a name that does
 * not resolve is refused too (it could not be called).
 */
export async function refusedReceiver(url: URL, policy: ReceiverPolicy): Promise<string | undefined> {
  const port = portOf(url);
  if (ownListenerByName(policy.own, url.hostname, port)) return `${url.host} ${OWN}`;
  const literal = literalHost(url);
  if (literal) return refusedAddress(literal, port, policy);
  // Private allowed and not an own port: no address could be refused.
  if (policy.allowPrivate && !policy.own.ports.has(port)) return undefined;
  let addresses: LookupAddress[];
  try {
    addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(url.hostname, { all: true, verbatim: true }, (err, list) => (err ? reject(err) : resolve(list))),
    );
  } catch (err) {
    return policy.allowPrivate ? undefined : `${url.hostname} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  for (const a of addresses) {
    const refused = await refusedAddress(a.address, port, policy);
    if (refused) return `${url.hostname} resolves to ${refused.replace(/^address /, '')}`;
  }
  return undefined;
}

/** A literal IP host checked before connecting (sockets skip the lookup for literals): the reason, or undefined. */
export async function refusedLiteral(url: URL, policy: ReceiverPolicy): Promise<string | undefined> {
  const port = portOf(url);
  if (ownListenerByName(policy.own, url.hostname, port)) return `${url.host} ${OWN}`;
  const literal = literalHost(url);
  return literal ? refusedAddress(literal, port, policy) : undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request to `port`: resolves, then refuses the connection if any resolved
 * address is refused by the policy, so the addresses checked are the addresses connected to.
 */
export function receiverLookup(port: number, policy: ReceiverPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, list) => {
      if (err) return callback(err, []);
      void Promise.all(list.map((a) => refusedAddress(a.address, port, policy))).then(
        (reasons) => {
          const refused = reasons.find((r) => r !== undefined);
          if (refused) return callback(Object.assign(new ReceiverRefused(refused), { code: 'ERECEIVERREFUSED' }), []);
          if (options.all) return callback(null, list);
          const first = list[0];
          if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
          callback(null, first.address, first.family);
        },
        (e: Error) => callback(Object.assign(e, { code: 'ERECEIVERREFUSED' }), []),
      );
    });
  };
}
