/**
 * Why a mail bounced, in the vocabulary of Sisimai (the reference bounce analyser, whose public
 * corpus and tables are what docs/bounces.md measures Cartero against). One rule set for both
 * paths: the send worker's synchronous SMTP replies (engines/bounces/smtp-reply.ts) and the inbound
 * listener's late reports (DSNs and MTA text bounces). What each means, and whether it is hard or
 * soft, is in reason-table.ts.
 */
export const BOUNCE_REASONS = [
  'userunknown', 'hostunknown', 'hasmoved', 'notaccept', 'mailboxfull', 'suspend', 'filtered', 'rejected', 'blocked',
  'spamdetected', 'virusdetected', 'policyviolation', 'securityerror', 'authfailure', 'requireptr', 'failedstarttls',
  'badreputation', 'norelaying', 'toomanyconn', 'speeding', 'expired', 'mesgtoobig', 'exceedlimit', 'contenterror',
  'notcompliantrfc', 'systemerror', 'systemfull', 'mailererror', 'networkerror', 'syntaxerror', 'suppressed', 'onhold', 'undefined',
] as const;
export type BounceReason = (typeof BOUNCE_REASONS)[number];

/** The SMTP command a reply answered, when known. */
export type SmtpCommand = 'CONN' | 'HELO' | 'MAIL' | 'RCPT' | 'DATA';
