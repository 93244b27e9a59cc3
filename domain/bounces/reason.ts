import type { BounceReason } from './reason-names.js';
import { PHRASES } from './reason-phrases.js';

// The rules that turn a failure report into a reason. The vocabulary lives in reason-names.ts so
// the phrase tables (reason-phrases.ts) can name reasons without importing these rules.

/** What a failure report (or an SMTP reply) says about one recipient. */
export interface FailureFacts {
  /** RFC 3463 enhanced status, normalized (5.1.1). */
  status?: string;
  /** Basic SMTP reply code (550). */
  code?: number;
  /** The remote server's words: the reply text, a DSN's Diagnostic-Code, an MTA's message. */
  diagnostic?: string;
  /** DSN action (failed, delayed, expired), when the report has one. */
  action?: string;
  /** The SMTP command the remote server refused, when the report says (smtpCommand). */
  command?: SmtpCommand;
}

export type SmtpCommand = 'CONN' | 'HELO' | 'MAIL' | 'RCPT' | 'DATA';

/**
 * Which SMTP command a report's text says was refused: Postfix's "(in reply to end of DATA
 * command)", Exim's "after MAIL FROM", qmail's "failed after I sent the message", a sendmail
 * transcript's ">>> DATA" then "<<< 550" (unless a "<<< 503" follows: a pipelined session whose
 * 550 answered RCPT TO). Undefined when it does not say.
 */
export function smtpCommand(text: string): SmtpCommand | undefined {
  for (const [command, re] of COMMANDS) if (re.test(text)) return command;
  return transcriptCommand(text);
}

const COMMANDS: ReadonlyArray<readonly [SmtpCommand, RegExp]> = [
  ['MAIL', /in reply to MAIL FROM\s+command|after MAIL FROM|sender was rejected|did not like our MAIL FROM/i],
  ['RCPT', /in reply to RCPT TO\s+command|after RCPT TO|does not like recipient|did not like our RCPT TO|after RCPT command/i],
  ['DATA', /in reply to end of DATA\s+command|after end of data|did not like our final DATA|failed after I sent the message|after DATA\s+command|for (?:TEXT|DATA)\s+command/i],
  ['CONN', /after initial connection|while connected to|in reply to (?:HELO|EHLO) command/i],
];

/**
 * A session transcript (sendmail, Courier: ">>> RCPT To:<...>" then "<<< 550 ..."): the command
 * whose replies include the first failure. Read line by line (no regular expression spans lines):
 * a "<<< 503" among DATA's replies means the session was pipelined and the failure answered RCPT.
 */
function transcriptCommand(text: string): SmtpCommand | undefined {
  if (!text.includes('>>> ')) return undefined;
  let current: SmtpCommand | undefined;
  let failed = false;
  let pipelined = false;
  const verdict = () => (current === 'DATA' && pipelined ? 'RCPT' : current);
  for (const raw of text.split('\n')) {
    const line = raw.trimStart();
    if (line.startsWith('>>> ')) {
      if (failed) return verdict();
      const word = line.slice(4, 8).toUpperCase();
      current = word === 'MAIL' ? 'MAIL' : word === 'RCPT' ? 'RCPT' : word === 'DATA' ? 'DATA' : word === 'EHLO' || word === 'HELO' ? 'HELO' : undefined;
      continue;
    }
    if (!line.startsWith('<<< ') || !current) continue;
    const code = line.slice(4, 7);
    if (code === '503') pipelined = true;
    else if (code[0] === '4' || code[0] === '5') failed = true;
  }
  return failed ? verdict() : undefined;
}

/**
 * Enhanced status codes that name the reason by themselves (RFC 3463 and its registry). Generic
 * codes (x.0.0, 5.7.1, 5.5.0...) are missing on purpose: MTAs use them for anything, and only
 * the text says which (a "5.0.0 blocked" is not an unknown user).
 */
const STATUS_REASON: Record<string, BounceReason> = {
  '1.1': 'userunknown',
  '1.2': 'hostunknown',
  '1.3': 'userunknown',
  '1.4': 'userunknown',
  '1.5': 'userunknown',
  '1.6': 'hasmoved',
  '1.7': 'rejected',
  '1.8': 'rejected',
  '1.9': 'systemerror',
  '1.10': 'notaccept',
  '2.1': 'suspend',
  '2.2': 'mailboxfull',
  '2.3': 'exceedlimit',
  '2.4': 'systemerror',
  '3.1': 'mailboxfull',
  '3.2': 'systemerror',
  '3.3': 'systemerror',
  '3.4': 'mesgtoobig',
  '3.5': 'systemerror',
  '4.1': 'networkerror',
  '4.2': 'networkerror',
  '4.3': 'systemerror',
  '4.4': 'hostunknown',
  '4.5': 'toomanyconn',
  '4.6': 'networkerror',
  '4.7': 'expired',
  '5.1': 'syntaxerror',
  '5.2': 'syntaxerror',
  '5.4': 'syntaxerror',
  '5.5': 'syntaxerror',
  '6.0': 'contenterror',
  '6.1': 'contenterror',
  '6.2': 'contenterror',
  '6.3': 'contenterror',
  '6.5': 'contenterror',
  '7.4': 'securityerror',
  '7.5': 'securityerror',
  '7.6': 'securityerror',
  '7.7': 'securityerror',
  '7.8': 'securityerror',
  '7.9': 'securityerror',
  '7.10': 'failedstarttls',
  '7.11': 'failedstarttls',
  '7.13': 'suspend',
  '7.14': 'securityerror',
  '7.15': 'securityerror',
  '7.16': 'mesgtoobig',
  '7.17': 'hasmoved',
  '7.18': 'hasmoved',
  '7.19': 'hasmoved',
  '7.20': 'authfailure',
  '7.21': 'authfailure',
  '7.22': 'authfailure',
  '7.23': 'authfailure',
  '7.24': 'authfailure',
  '7.25': 'requireptr',
  '7.26': 'authfailure',
  // The sender's domain publishes a null MX (RFC 7505): a refusal of the sender, not of the recipient.
  '7.27': 'rejected',
  '7.28': 'spamdetected',
  '7.29': 'authfailure',
  '7.30': 'failedstarttls',
};

/** Reasons that say the address itself is dead: a hard bounce, which restricts the recipient at once. */
const DEAD_ADDRESS = new Set<BounceReason>(['userunknown', 'hostunknown', 'hasmoved']);

/**
 * Statuses that say the mailbox exists (x.2.2 full, x.2.3 too big, x.2.4, x.7.13 suspended): a
 * generic "user unknown" text beside them is a template. Not x.2.1 ("mailbox disabled"): servers
 * write "550 5.2.1 User unknown" for addresses that do not exist as often as for disabled ones.
 */
const MAILBOX_EXISTS = /^[45]\.(2\.[2-4]|7\.13)$/;

/** Words that say the account does not exist even when said after DATA (Yahoo's "doesn't have a yahoo.com account"). */
const EXPLICIT_NO_ACCOUNT = /doesn't have an? [^ ]+ account|invalid recipient|adresse destinataire invalide/;

/** Statuses about the sender (its address, domain or authority), never about the recipient. */
const SENDER_SIDE = /^[45]\.(1\.(7|8)|7\.27)$/;

/**
 * Reply codes without an enhanced status. 550-553 are used for everything, so they only decide
 * when nothing else did (and then not as an unknown user: the address is not known to be dead).
 */
const CODE_REASON: Record<number, BounceReason> = {
  421: 'blocked',
  450: 'onhold',
  451: 'systemerror',
  452: 'mailboxfull',
  500: 'syntaxerror',
  501: 'syntaxerror',
  502: 'syntaxerror',
  503: 'syntaxerror',
  504: 'syntaxerror',
  521: 'notaccept',
  // RFC 5321: "User not local; please try <forward-path>": the address moved.
  551: 'hasmoved',
  552: 'mesgtoobig',
  556: 'notaccept',
};

/**
 * The reason of a failure. The diagnostic's words first; then a specific status; then the reply
 * code. Two signals can overrule the words: a specific status that contradicts a dead address
 * ("550 5.2.1 user unknown" is a disabled mailbox: the status is the server's considered code,
 * the text a generic template), and the refused command: an address refused after MAIL FROM is
 * the sender's, and one refused only after DATA was accepted at RCPT TO, so the refusal is the
 * content being filtered, not the address being dead.
 */
export function bounceReason(facts: FailureFacts): BounceReason {
  const status = facts.status;
  // A refusal of the sender is that whatever the text adds ("5.1.8 ... user unknown" is the sender).
  if (status && SENDER_SIDE.test(status)) return 'rejected';
  const text = facts.diagnostic ? normalize(facts.diagnostic) : '';
  const fromText = text ? reasonOfText(text) : undefined;
  const fromStatus = status ? STATUS_REASON[status.slice(2)] : undefined;
  let reason = fromText;
  if (reason && DEAD_ADDRESS.has(reason) && fromStatus && status && MAILBOX_EXISTS.test(status)) reason = fromStatus;
  reason ??= fromStatus;
  if (reason && (DEAD_ADDRESS.has(reason) || reason === 'notaccept')) {
    if (facts.command === 'MAIL') return 'rejected';
    if (facts.command === 'DATA' && reason === 'userunknown' && !EXPLICIT_NO_ACCOUNT.test(text)) return 'filtered';
  }
  if (reason) return reason;
  if (facts.action === 'expired' || facts.action === 'delayed') return 'expired';
  if (facts.code !== undefined && CODE_REASON[facts.code]) return CODE_REASON[facts.code]!;
  if (status === '5.7.1' || status === '5.7.0') return 'securityerror';
  if (status?.startsWith('5.') || (facts.code ?? 0) >= 500) return 'onhold';
  return 'undefined';
}

/** The first reason whose phrase table matches, tables in order of precedence (reason-phrases.ts). */
export function reasonOfText(text: string): BounceReason | undefined {
  for (const [reason, table] of PHRASES) {
    for (const p of table) {
      if (typeof p === 'string' ? text.includes(p) : p.test(text)) return reason;
    }
  }
  return undefined;
}

/** Lower case, one space for any run of white space, so phrases match across folded lines. */
export function normalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ');
}


/**
 * Hard only when the reason says the address is dead, and the failure is permanent; notaccept (the domain accepts no mail: a
 * null MX, 521/556) only when permanent. Blocks, policy, reputation, authentication, content and
 * a refusal of the sender are soft: they never restrict the recipient at once.
 */
export function isHardReason(reason: BounceReason, facts: Pick<FailureFacts, 'status' | 'code'>): boolean {
  if (facts.status && SENDER_SIDE.test(facts.status)) return false;
  // A temporary failure (4.x.x, 4xx) never says the address is dead: a DNS answer that may change, a directory down.
  if (facts.status ? facts.status.startsWith('4') : facts.code !== undefined && facts.code < 500) return false;
  if (DEAD_ADDRESS.has(reason)) return true;
  if (reason === 'notaccept') return facts.status ? facts.status.startsWith('5') : (facts.code ?? 0) >= 500;
  return false;
}

export interface Classified {
  reason: BounceReason;
  bounceClass: 'hard' | 'soft';
}

/** `stated`: a reason the report's format gives when its words name none (used only then). */
export function classifyFailure(facts: FailureFacts, stated?: BounceReason): Classified {
  let reason = bounceReason(facts);
  if (stated && (reason === 'onhold' || reason === 'undefined')) reason = stated;
  return { reason, bounceClass: isHardReason(reason, facts) ? 'hard' : 'soft' };
}
