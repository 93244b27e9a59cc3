/**
 * Why a mail bounced, in the vocabulary of Sisimai (the reference bounce analyser, whose public
 * corpus and tables are what docs/bounces.md measures Cartero against). One rule set for both
 * paths: the send worker's synchronous SMTP replies (domain/mail/smtp-reply.ts) and the inbound
 * listener's late reports (DSNs and MTA text bounces).
 */
export const BOUNCE_REASONS = [
  'userunknown', 'hostunknown', 'hasmoved', 'notaccept', 'mailboxfull', 'suspend', 'filtered', 'rejected', 'blocked',
  'spamdetected', 'virusdetected', 'policyviolation', 'securityerror', 'authfailure', 'requireptr', 'failedstarttls',
  'badreputation', 'norelaying', 'toomanyconn', 'speeding', 'expired', 'mesgtoobig', 'exceedlimit', 'contenterror',
  'notcompliantrfc', 'systemerror', 'mailererror', 'networkerror', 'syntaxerror', 'onhold', 'undefined',
] as const;
export type BounceReason = (typeof BOUNCE_REASONS)[number];
