import type { BounceReason, SmtpCommand } from './reason-names.js';
import { localAgentReason } from './local-agents.js';
import { says, saysNoSuchAccount } from './reason-phrases.js';
import { REASON_TABLE } from './reason-table.js';
import { providerReason, type ReportHosts } from './providers.js';

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
  /** A DSN's Diagnostic-Code type (smtp, x-postfix, x-unix...), lower-cased; undefined for a reply or a text bounce. */
  diagnosticType?: string;
  /** Where the report came from (the recipient, the remote MTA, the reporting MTA): a large provider's own texts are read by its rules (providers.ts). */
  hosts?: ReportHosts;
}

// Declared beside the reason names, so providers.ts (which reason.ts calls) needs nothing of this file.
export type { SmtpCommand } from './reason-names.js';

/**
 * Which SMTP command a report's text says was refused: Postfix's "(in reply to end of DATA
 * command)", Exim's "after MAIL FROM", qmail's "failed after I sent the message", a sendmail
 * transcript's ">>> DATA" then "<<< 550" (unless a "<<< 503" follows: a pipelined session whose
 * 550 answered RCPT TO). Undefined when it does not say.
 */
export function smtpCommand(text: string): SmtpCommand | undefined {
  for (const [command, re] of COMMANDS) if (re.test(text)) return command;
  return transcriptCommand(text) ?? commandToken(text);
}

/**
 * A command named in capitals as a word of its own ("most progress was RCPT TO response",
 * "SMTP:RCPT host", "[RCPT_TO]"), not inside an address or a word (DATABASE@, EHLO.example).
 * When several are named, the one latest in a session wins: the session got that far.
 */
function commandToken(text: string): SmtpCommand | undefined {
  let found: SmtpCommand | undefined;
  for (const [command, re] of TOKENS) if (re.test(text)) found = command;
  return found;
}

const TOKENS: ReadonlyArray<readonly [SmtpCommand, RegExp]> = [
  ['HELO', /(?<![A-Za-z0-9@])(?:HELO|EHLO)(?![A-Za-z0-9@.])/],
  ['MAIL', /(?<![A-Za-z0-9@])MAIL F(?:ROM|rom)/],
  ['RCPT', /(?<![A-Za-z0-9@])RCPT(?![A-Za-z0-9@.])/],
  ['DATA', /(?<![A-Za-z0-9@])DATA(?![A-Za-z0-9@.])/],
];

const COMMANDS: ReadonlyArray<readonly [SmtpCommand, RegExp]> = [
  ['MAIL', /in reply to MAIL FROM\s+command|after MAIL FROM|sender was rejected|did not like our MAIL FROM/i],
  ['RCPT', /in reply to RCPT TO\s+command|after RCPT TO|does not like recipient|did not like our RCPT TO|after RCPT command/i],
  ['DATA', /in reply to end of DATA\s+command|after end of data|did not like our final DATA|failed after I sent the message|after DATA\s+command|for (?:TEXT|DATA)\s+command|failed on DATA command/i],
  ['CONN', /after initial connection|while connected to|but greeting failed/i],
  ['HELO', /in reply to (?:HELO|EHLO) command|refused to talk to me|but my name was rejected/i],
];

/**
 * A session transcript (sendmail, Courier: ">>> RCPT To:<...>" then "<<< 550 ..."): the command
 * of its first ">>>" line, as the reference analyser reads it (a pipelined session's transcript
 * starts at the command whose reply came back first). Read line by line: no regular expression
 * spans lines. Replies without a command say nothing: the text may be a fragment of the transcript.
 */
function transcriptCommand(text: string): SmtpCommand | undefined {
  if (!text.includes('>>> ')) return undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trimStart();
    if (!line.startsWith('>>> ')) continue;
    const word = line.slice(4, 8).toUpperCase();
    if (word === 'MAIL') return 'MAIL';
    if (word === 'RCPT') return 'RCPT';
    if (word === 'DATA') return 'DATA';
    if (word === 'EHLO' || word === 'HELO') return 'HELO';
  }
  return undefined;
}

/**
 * What an enhanced status code (RFC 3463 and the IANA registry) says by itself. Generic codes
 * (x.0.0, x.5.0, x.7.0...) are missing: MTAs use them for anything, and only the words say which.
 * Aligned with the reference analyser's table, which reads some codes more narrowly than the RFC
 * titles: 5.2.1 "mailbox disabled" and 5.2.0 are `filtered` (the mailbox exists), 4.4.1 "no
 * answer from host" is `expired` (an MTA reports it when it gave up retrying). One deliberate
 * difference: 5.7.27 (the *sender's* domain has a null MX) is `rejected`, a refusal of the sender,
 * never a dead recipient.
 */
export const STATUS_NAME: Readonly<Record<string, BounceReason>> = {
  '4.1.6': 'hasmoved', '4.1.7': 'rejected', '4.1.8': 'rejected', '4.1.9': 'systemerror',
  '4.2.1': 'blocked', '4.2.2': 'mailboxfull', '4.2.3': 'exceedlimit', '4.2.4': 'filtered',
  '4.3.1': 'systemfull', '4.3.2': 'notaccept', '4.3.3': 'systemerror', '4.3.5': 'systemerror',
  '4.4.1': 'expired', '4.4.2': 'networkerror', '4.4.3': 'systemerror', '4.4.4': 'networkerror', '4.4.5': 'systemfull',
  '4.4.6': 'networkerror', '4.4.7': 'expired', '4.4.8': 'networkerror',
  '4.5.3': 'systemerror', '4.5.5': 'systemerror',
  '4.6.0': 'contenterror', '4.6.2': 'contenterror', '4.6.5': 'contenterror',
  '4.7.1': 'blocked', '4.7.2': 'blocked', '4.7.5': 'securityerror', '4.7.6': 'securityerror', '4.7.7': 'securityerror',
  '4.7.12': 'securityerror', '4.7.15': 'securityerror', '4.7.16': 'mesgtoobig', '4.7.24': 'authfailure', '4.7.25': 'requireptr',
  '4.7.26': 'authfailure',
  '5.1.0': 'userunknown', '5.1.1': 'userunknown', '5.1.2': 'hostunknown', '5.1.3': 'userunknown', '5.1.4': 'filtered',
  '5.1.6': 'hasmoved', '5.1.7': 'rejected', '5.1.8': 'rejected', '5.1.9': 'systemerror', '5.1.10': 'notaccept',
  '5.2.0': 'filtered', '5.2.1': 'filtered', '5.2.2': 'mailboxfull', '5.2.3': 'exceedlimit', '5.2.4': 'filtered',
  '5.3.0': 'systemerror', '5.3.1': 'systemfull', '5.3.2': 'notaccept', '5.3.3': 'systemerror', '5.3.4': 'mesgtoobig', '5.3.5': 'systemerror',
  '5.4.0': 'networkerror', '5.4.3': 'systemerror', '5.4.4': 'hostunknown', '5.4.7': 'expired',
  '5.5.2': 'syntaxerror', '5.5.3': 'toomanyconn', '5.5.4': 'systemerror', '5.5.5': 'systemerror', '5.5.6': 'syntaxerror',
  '5.6.0': 'contenterror', '5.6.1': 'contenterror', '5.6.2': 'contenterror', '5.6.3': 'contenterror', '5.6.5': 'contenterror',
  '5.6.6': 'contenterror', '5.6.7': 'contenterror', '5.6.8': 'contenterror', '5.6.9': 'contenterror',
  '5.7.0': 'securityerror', '5.7.1': 'securityerror', '5.7.2': 'securityerror', '5.7.3': 'securityerror', '5.7.4': 'securityerror',
  '5.7.5': 'securityerror', '5.7.6': 'securityerror', '5.7.7': 'securityerror', '5.7.8': 'securityerror', '5.7.9': 'securityerror',
  '5.7.10': 'securityerror', '5.7.11': 'securityerror', '5.7.13': 'suspend', '5.7.14': 'securityerror', '5.7.15': 'securityerror',
  '5.7.16': 'mesgtoobig', '5.7.17': 'hasmoved', '5.7.18': 'hasmoved', '5.7.19': 'securityerror', '5.7.20': 'authfailure',
  '5.7.21': 'authfailure', '5.7.22': 'authfailure', '5.7.23': 'authfailure', '5.7.24': 'authfailure', '5.7.25': 'requireptr',
  '5.7.26': 'authfailure', '5.7.27': 'rejected', '5.7.28': 'spamdetected', '5.7.29': 'authfailure', '5.7.30': 'failedstarttls',
};

/** A status about the sender (its address, its domain), never about the recipient. */
const SENDER_SIDE = /^[45]\.(1\.(7|8)|7\.27)$/;

/** Reasons a status names too loosely to settle alone: the words are read again. */
const RETRIED = new Set<BounceReason>(['undefined', 'onhold', 'systemerror', 'securityerror', 'expired', 'networkerror', 'hostunknown', 'userunknown']);

/** Commands answered before the message was sent: a refusal there is not about the content. */
const BEFORE_DATA = new Set<SmtpCommand | undefined>(['CONN', 'HELO', 'MAIL', 'RCPT']);

interface Facts {
  status?: string;
  code?: number;
  text: string;
  command?: SmtpCommand;
  named?: BounceReason;
}

/**
 * The probes, in precedence order: each says whether the failure is its reason, from what the
 * status names, the refused command and the words. The most specific, live-mailbox causes come
 * first (full, too big, suspended, moved), then the dead address, which is only believed on
 * firm ground: a "user unknown" answered to RCPT TO, or a status that says the mailbox does not
 * exist (x.1.1) without words of another cause. The same words anywhere else (after DATA, or
 * with no command known) mean the address was accepted and the message refused: `filtered`.
 */
const PROBES: ReadonlyArray<readonly [Exclude<BounceReason, 'onhold' | 'undefined'>, (f: Facts) => boolean]> = [
  ['mailboxfull', (f) => f.named === 'mailboxfull' || says('mailboxfull', f.text)],
  ['mesgtoobig', (f) => f.named === 'mesgtoobig' || says('mesgtoobig', f.text)],
  ['exceedlimit', (f) => f.named === 'exceedlimit' || says('exceedlimit', f.text)],
  ['suspend', (f) => f.code === 525 || says('suspend', f.text)],
  ['hasmoved', (f) => f.named === 'hasmoved' || says('hasmoved', f.text)],
  ['norelaying', (f) => says('norelaying', f.text)],
  ['authfailure', (f) => f.named === 'authfailure' || says('authfailure', f.text)],
  ['userunknown', (f) => {
    if (f.named === 'userunknown') return !OTHER_THAN_UNKNOWN.some((r) => says(r, f.text));
    // A content or policy filter's refusal that quotes "no such user" is the filter's (`filtered`, soft):
    // the reference reads such words as the mailbox's only at RCPT TO or beside an x.1.1 status.
    if (saysFilter(f.text) && f.command !== 'RCPT') return false;
    // Stated outright, the account's absence is believed at any command; not when the words are about the sender or the domain.
    if (saysNoSuchAccount(f.text)) return f.command !== 'MAIL' && !says('hostunknown', f.text) && !says('rejected', f.text);
    // A bare 5.0.0 written by the refusing server itself ("550 5.0.0 <a@b>... User unknown"), no
    // command after the envelope: its own words are the only reason it gives, and they name the
    // mailbox. Not a relaying MTA's `Status: 5.0.0` over a quoted terse reply ("550 : User
    // unknown"), which the reference reads as a filter's refusal (`filtered`).
    if (f.status === '5.0.0' && !f.command && SERVER_BARE_500.test(f.text)) return saysUnknownUser(f.text);
    return f.command === 'RCPT' && saysUnknownUser(f.text);
  }],
  ['filtered', (f) => {
    if (f.named === 'filtered') return saysUnknownUser(f.text) || says('filtered', f.text);
    return !BEFORE_DATA.has(f.command) && (says('filtered', f.text) || saysUnknownUser(f.text));
  }],
  ['requireptr', (f) => f.named === 'requireptr' || says('requireptr', f.text)],
  ['notcompliantrfc', (f) => says('notcompliantrfc', f.text)],
  ['badreputation', (f) => says('badreputation', f.text)],
  ['contenterror', (f) => f.named === 'contenterror' || says('contenterror', f.text)],
  ['rejected', (f) => {
    if (f.named === 'rejected') return true;
    if (!says('rejected', f.text)) return false;
    if (f.command === 'DATA') return f.named !== 'userunknown';
    // An x.1.x "address" status beside words about the sender is about the sender.
    return f.command === 'MAIL' || !f.named || f.named === 'securityerror' || f.named === 'systemerror' || f.named === 'userunknown';
  }],
  // A DNS answer that may change ("try again", a lookup error) is the network, not a dead domain.
  ['hostunknown', (f) => (says('networkerror', f.text) ? false : f.named === 'hostunknown' || says('hostunknown', f.text))],
  ['spamdetected', (f) => !!f.status && (f.named === 'spamdetected' || (!BEFORE_DATA.has(f.command) && says('spamdetected', f.text)))],
  ['speeding', (f) => says('speeding', f.text)],
  ['toomanyconn', (f) => f.named === 'toomanyconn' || says('toomanyconn', f.text)],
  ['blocked', (f) => f.named === 'blocked' || says('blocked', f.text)],
];

/** Words of another cause beside an x.1.1 status: the status is a template, the words say why. */
const OTHER_THAN_UNKNOWN = ['norelaying', 'blocked', 'mailboxfull', 'hasmoved', 'notaccept', 'filtered', 'rejected', 'speeding', 'toomanyconn'] as const;

/** The reply's own enhanced code is a bare 5.0.0 (normalized text). */
const SERVER_BARE_500 = /(?:^|[\s;(#-])5\.0\.0(?![\d.])/;

/** Words of a filter that judged the message (content, spam, policy, virus), not the address. */
function saysFilter(text: string): boolean {
  return says('filtered', text) || says('spamdetected', text) || says('virusdetected', text) || says('policyviolation', text);
}

/** "User unknown" words, unless they are about the domain ("domain does not exist"). */
function saysUnknownUser(text: string): boolean {
  return says('userunknown', text) && !says('hostunknown', text);
}

/** When no probe decided: the words of the remaining reasons, in this order, then what the status names. */
const SECOND_READING = [
  'mailboxfull', 'authfailure', 'badreputation', 'speeding', 'spamdetected', 'virusdetected', 'policyviolation', 'norelaying',
  'systemerror', 'networkerror', 'suspend', 'contenterror', 'systemfull', 'notaccept', 'expired', 'failedstarttls', 'securityerror',
  'suppressed', 'mailererror',
] as const;

/**
 * The reason of a failure, by the reference analyser's procedure. `stated`: what the report's
 * format itself says (a mailing list's "you may not post" is `rejected`), which stands unless it
 * is one of the loosely named reasons that are read again.
 *
 * 1. A status about the sender is `rejected`, whatever the words add.
 * 2. The probes (above), for an SMTP diagnostic or a text without a type.
 * 3. A status whose name is firm; else the words of the remaining reasons; else the status's
 *    name however loose; else its class (x.6 content, x.7 security); a local delivery program's
 *    failure (X-Unix); a 50x syntax error; a queue that gave up; a refusal at HELO (`blocked`).
 * 4. `onhold` when there were words that named nothing, `undefined` when there were none.
 */
export function bounceReason(facts: FailureFacts, stated?: BounceReason): BounceReason {
  const status = facts.status;
  if (status && SENDER_SIDE.test(status)) return 'rejected';
  if (stated && !RETRIED.has(stated)) return stated;
  const f: Facts = {
    ...(status ? { status } : {}),
    ...(facts.code !== undefined ? { code: facts.code } : {}),
    text: facts.diagnostic ? normalize(facts.diagnostic) : '',
    ...(facts.command ? { command: facts.command } : {}),
    ...(status && STATUS_NAME[status] ? { named: STATUS_NAME[status] } : {}),
  };
  // A large provider's own sentence or code, when the report is about that provider, says more
  // than the generic phrase tables (the reference analyser's per-provider modules take precedence too).
  const reason = (facts.hosts ? providerReason(facts.hosts, f) : undefined) ?? readReason(f, facts, stated);
  // An address refused at MAIL FROM is the sender's, whatever the words say of an unknown user.
  return facts.command === 'MAIL' && REASON_TABLE[reason].verdict !== 'soft' ? 'rejected' : reason;
}

function readReason(f: Facts, facts: FailureFacts, stated: BounceReason | undefined): BounceReason {
  // Postfix's own diagnostics (X-Postfix) are read like a remote server's.
  const type = facts.diagnosticType === 'x-postfix' ? 'smtp' : facts.diagnosticType;
  // A local delivery agent's own refusal, quoted after the message was accepted.
  const agent = !facts.command || facts.command === 'DATA' ? localAgentReason(f.text) : undefined;
  if (agent) return agent;
  if (!type || type === 'smtp') {
    // A reason the format stated is taken by its own probe's turn: an earlier, more specific one still wins.
    for (const [reason, probe] of PROBES) if (stated === reason || probe(f)) return reason;
  }
  // A reason the format stated, however loose, before the second reading of the words.
  const reason = (stated && stated !== 'onhold' && stated !== 'undefined' ? stated : undefined) ?? secondReading(f, facts, type);
  if (reason) return reason;
  if (facts.action === 'delayed') return 'expired';
  return f.text ? 'onhold' : 'undefined';
}

function secondReading(f: Facts, facts: FailureFacts, type: string | undefined): BounceReason | undefined {
  if (f.named && !RETRIED.has(f.named) && type === 'smtp') return f.named;
  for (const r of SECOND_READING) if (says(r, f.text)) return r;
  if (f.named) return f.named;
  const subject = f.status?.slice(0, 3);
  if (subject === '5.6' || subject === '4.6') return 'contenterror';
  if (subject === '5.7' || subject === '4.7') return 'securityerror';
  if (type?.startsWith('x-unix')) return 'mailererror';
  if (f.code !== undefined && f.code >= 500 && f.code <= 504) return 'syntaxerror';
  if (facts.action === 'delayed' || facts.action === 'expired') return 'expired';
  if (facts.command === 'HELO' || facts.command === 'CONN') return 'blocked';
  if (f.code !== undefined && CODE_REASON[f.code]) return CODE_REASON[f.code];
  return undefined;
}

/** Reply codes that say something without an enhanced status (RFC 5321). */
const CODE_REASON: Readonly<Record<number, BounceReason>> = {
  421: 'blocked',
  452: 'mailboxfull',
  521: 'notaccept',
  551: 'hasmoved',
  552: 'mesgtoobig',
  556: 'notaccept',
};

/** The first reason whose words the text holds, probes' order then the rest (formats use it to tell words from noise). */
export function reasonOfText(text: string): BounceReason | undefined {
  for (const [reason] of PROBES) if (reason !== 'filtered' && says(reason, text)) return reason;
  for (const r of SECOND_READING) if (says(r, text)) return r;
  return says('filtered', text) ? 'filtered' : says('syntaxerror', text) ? 'syntaxerror' : undefined;
}

/** Lower case, one space for any run of white space, so phrases match across folded lines. */
export function normalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ');
}

/**
 * Hard or soft, by the reason (reason-table.ts), never by the class digit alone: a dead address
 * is hard even as 4.1.1 or with no code; `notaccept` is hard unless the status or reply code says
 * the failure was temporary (4.x.x, 4xx).
 */
export function isHardReason(reason: BounceReason, facts: Pick<FailureFacts, 'status' | 'code'>): boolean {
  const verdict = REASON_TABLE[reason].verdict;
  if (verdict === 'hard') return true;
  if (verdict === 'soft') return false;
  const cls = facts.status?.[0] ?? (facts.code !== undefined ? String(facts.code)[0] : undefined);
  return cls !== '4';
}

export interface Classified {
  reason: BounceReason;
  bounceClass: 'hard' | 'soft';
}

/** `stated`: a reason the report's format gives (see bounceReason). */
export function classifyFailure(facts: FailureFacts, stated?: BounceReason): Classified {
  const reason = bounceReason(facts, stated);
  return { reason, bounceClass: isHardReason(reason, facts) ? 'hard' : 'soft' };
}
