/**
 * The state of one DNS check of a sending domain (mx, spf, dkim, dmarc) and of a DKIM key's
 * record. Its own module so the domain rows (domains.ts) and the DKIM keys (dkim-keys.ts) share it
 * without importing each other.
 */
export const DNS_CHECK_STATES = ['pending', 'approved', 'failed'] as const;
export type DnsCheckState = (typeof DNS_CHECK_STATES)[number];
