/**
 * Whether a VERP return path (`bounce+MAILID.TAG@host`) is on the mail's sender domain: the
 * sender's own domain, or a subdomain of it (the return-path host, e.g. `bounces.<domain>`, which
 * the sender domain's SPF and MX records name). A report that reached us at another domain's
 * return path is about a mail that never used it: forged, or misrouted; the listener ignores
 * and logs it. A mail without a recorded sender (none in practice) is not checked.
 */
export function verpDomainMatches(verpAddress: string, sender: string | null): boolean {
  if (!sender) return true;
  const host = verpAddress.slice(verpAddress.lastIndexOf('@') + 1).trim().toLowerCase().replace(/\.$/, '');
  const domain = sender.slice(sender.lastIndexOf('@') + 1).trim().toLowerCase().replace(/\.$/, '');
  return !!domain && (host === domain || host.endsWith(`.${domain}`));
}
