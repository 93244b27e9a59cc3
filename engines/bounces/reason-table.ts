import type { BounceReason } from './reason-names.js';

/**
 * Every bounce reason: what it means, whether it is judged hard or soft, and what Cartero does.
 * The classifier reads the verdict from here (reason.ts isHardReason), and docs/bounces.md's
 * reason table is generated from here (domain/bounces/reason-doc.ts), so the two cannot
 * disagree.
 *
 * The verdict follows the reference analyser's rule: the reason decides, not the class digit. An
 * address that does not exist (or whose domain does not, or that moved) never works again:
 * hard, even when the server wrote 4.1.1 or 5.0.0 or no code at all. Everything else means the
 * address exists and this mail (or this sender) was refused or delayed: soft, even with 5.x.x.
 * A domain that accepts no mail (`notaccept`) is hard unless the server said it was temporary.
 */
export type Verdict = 'hard' | 'hard unless temporary' | 'soft';

export interface ReasonRow {
  meaning: string;
  verdict: Verdict;
}

const HARD_ACTION = 'bounced (hard); the recipient is restricted at once (`hard_bounce`)';
const SOFT_ACTION = 'bounced (soft); counts toward the soft-bounce threshold (`soft_bounce`)';

export const REASON_TABLE: Readonly<Record<BounceReason, ReasonRow>> = {
  userunknown: { meaning: 'The mailbox does not exist at the recipient domain', verdict: 'hard' },
  hostunknown: { meaning: "The recipient's domain does not exist or has no mail host", verdict: 'hard' },
  hasmoved: { meaning: 'The mailbox moved and mail is not forwarded', verdict: 'hard' },
  notaccept: { meaning: 'The recipient domain accepts no mail at all (null MX, 521/556)', verdict: 'hard unless temporary' },
  mailboxfull: { meaning: "The recipient's mailbox is full", verdict: 'soft' },
  suspend: { meaning: "The recipient's account is disabled or suspended", verdict: 'soft' },
  filtered: { meaning: "Refused by the recipient's filters or settings after the address was accepted", verdict: 'soft' },
  rejected: { meaning: 'The sender (envelope from, its domain) was refused, or may not post (mailing lists)', verdict: 'soft' },
  blocked: { meaning: "The sending host's IP address or name was refused (block lists, connection refused)", verdict: 'soft' },
  spamdetected: { meaning: 'The content was judged spam', verdict: 'soft' },
  virusdetected: { meaning: 'A virus scanner refused the content', verdict: 'soft' },
  policyviolation: { meaning: 'The content or attachment broke the receiving organisation’s policy', verdict: 'soft' },
  securityerror: { meaning: 'A security check failed (not authorised, credentials, TLS policy)', verdict: 'soft' },
  authfailure: { meaning: 'SPF, DKIM or DMARC failed', verdict: 'soft' },
  requireptr: { meaning: "The sending IP has no valid reverse DNS (PTR)", verdict: 'soft' },
  failedstarttls: { meaning: 'TLS was required and could not be negotiated', verdict: 'soft' },
  badreputation: { meaning: "The sending IP's reputation is too low", verdict: 'soft' },
  norelaying: { meaning: 'The receiving server refused to relay', verdict: 'soft' },
  toomanyconn: { meaning: 'Too many connections or recipients at once', verdict: 'soft' },
  speeding: { meaning: 'Sending too fast (rate limited)', verdict: 'soft' },
  expired: { meaning: 'Delivery kept failing until the queue gave up (retry time exceeded)', verdict: 'soft' },
  mesgtoobig: { meaning: 'The message is larger than the receiving system accepts', verdict: 'soft' },
  exceedlimit: { meaning: "The message exceeds the recipient's own size limit", verdict: 'soft' },
  contenterror: { meaning: 'The message format or media could not be handled', verdict: 'soft' },
  notcompliantrfc: { meaning: 'The message does not comply with RFC 5322 (duplicate headers...)', verdict: 'soft' },
  systemerror: { meaning: 'The receiving system failed (misconfiguration, loop, internal error)', verdict: 'soft' },
  systemfull: { meaning: "The receiving system's disk is full", verdict: 'soft' },
  mailererror: { meaning: 'The local delivery program failed (procmail, a pipe)', verdict: 'soft' },
  networkerror: { meaning: 'DNS or network failure on the way (routing, lookup)', verdict: 'soft' },
  syntaxerror: { meaning: 'An SMTP command was refused as a syntax error', verdict: 'soft' },
  suppressed: { meaning: "The address is on the relaying provider's suppression list", verdict: 'soft' },
  onhold: { meaning: 'A failure that says nothing more specific', verdict: 'soft' },
  undefined: { meaning: 'A failure report with no status and no words to read', verdict: 'soft' },
};

/** What Cartero does with a mail bounced for this reason (docs/bounces.md). */
export function actionOf(row: ReasonRow): string {
  if (row.verdict === 'hard') return HARD_ACTION;
  if (row.verdict === 'hard unless temporary') return `${HARD_ACTION}; with a 4.x.x / 4xx: ${SOFT_ACTION}`;
  return SOFT_ACTION;
}
