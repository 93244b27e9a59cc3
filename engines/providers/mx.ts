import type { ProviderId } from './table.js';

/**
 * Who receives a domain's mail, from its MX hosts: a company's own domain whose MX is at Google
 * is Google Workspace, at `*.mail.protection.outlook.com` (or Microsoft's DNSSEC form
 * `*.mx.microsoft`) Microsoft 365, and a few consumer providers host custom domains too (iCloud+,
 * Zoho, Proton, Yandex 360). Each rule is a host suffix, matched on a label boundary.
 * docs/deliverability.md lists the rules with their sources.
 */
const MX_RULES: ReadonlyArray<{ suffix: string; provider: ProviderId }> = [
  { suffix: 'google.com', provider: 'google_workspace' },
  { suffix: 'googlemail.com', provider: 'google_workspace' },
  { suffix: 'mail.protection.outlook.com', provider: 'microsoft_365' },
  { suffix: 'mx.microsoft', provider: 'microsoft_365' },
  { suffix: 'mail.icloud.com', provider: 'apple' },
  { suffix: 'zoho.com', provider: 'zoho' },
  { suffix: 'zoho.eu', provider: 'zoho' },
  { suffix: 'zoho.in', provider: 'zoho' },
  { suffix: 'protonmail.ch', provider: 'proton' },
  { suffix: 'yandex.net', provider: 'yandex' },
  { suffix: 'yandex.ru', provider: 'yandex' },
];

const onBoundary = (host: string, suffix: string) => host === suffix || host.endsWith(`.${suffix}`);

/**
 * The provider of a domain whose MX hosts are these, or 'other'. When hosts point to several
 * providers (a migration in progress), the most preferred MX wins: the caller passes them in
 * preference order.
 */
export function providerOfMx(hosts: readonly string[]): ProviderId {
  for (const raw of hosts) {
    const host = raw.toLowerCase().replace(/\.$/, '');
    const rule = MX_RULES.find((r) => onBoundary(host, r.suffix));
    if (rule) return rule.provider;
  }
  return 'other';
}

/**
 * Names no one's mail is hosted at, so they are never looked up: the special-use and reserved
 * names of RFC 2606, RFC 6761, RFC 6762, RFC 7686, RFC 8375 and RFC 9476 (.test, .example,
 * .invalid, .localhost, .local, .onion, home.arpa, .alt, example.com/net/org), .internal, which
 * ICANN reserved for private use in 2024, single-label names and address literals. Tests and
 * demos write to these; a lookup of them would only leak a query.
 */
const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local', 'onion', 'alt', 'internal']);
const RESERVED_NAMES = ['example.com', 'example.net', 'example.org', 'home.arpa'];

export function isLookupWorthy(domain: string): boolean {
  const name = domain.toLowerCase().replace(/\.$/, '');
  if (!name.includes('.') || name.startsWith('[') || /^[\d.]+$/.test(name) || name.includes(':')) return false;
  if (RESERVED_TLDS.has(name.slice(name.lastIndexOf('.') + 1))) return false;
  return !RESERVED_NAMES.some((r) => onBoundary(name, r));
}
