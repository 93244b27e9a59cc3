import type { ParsedMail } from 'mailparser';
import { statusCode, type DsnRecipient } from '../dsn.js';
import { headerBlock, type FieldBlock } from '../fields.js';
import type { BounceReason } from '../reason-names.js';
import { normalize, reasonOfText, smtpCommand, type SmtpCommand } from '../reason.js';

/**
 * The shared reader of MTA text bounces: mails written for a person, not the RFC 3464 machine
 * format, by qmail, Exim, Exchange 2003, Gmail and the others (one module per family in this
 * folder). Each family says how to recognise its mails (markers in the sender, subject or body),
 * where its error section starts and where the returned original begins; this module reads the
 * section the same way for all: which addresses failed, and for each the text after it (the
 * remote server's reply, or the MTA's own words), its enhanced status and reply code.
 */
export interface InboundText {
  parsed: ParsedMail;
  /** Lower-cased From address (the bounce's author: MAILER-DAEMON, postmaster...). */
  from: string;
  subject: string;
  /** The message's readable text: the text parts, or the HTML part as text, CRLF made LF. */
  text: string;
  header(name: string): string | undefined;
}

export interface TextFormat {
  /** The family's name, shown in logs and in docs/bounces.md's table. */
  name: string;
  /** Whether a message is one of this family's bounces. */
  detect(m: InboundText): boolean;
  /** Where the error section starts (the section begins after the match); the whole text when absent or unmatched. */
  start?: RegExp;
  /** The section begins on the line after the start marker's (the marker's line is boilerplate). */
  startSkipsLine?: boolean;
  /** Where the returned original (or the end of the error section) begins; the first match of any ends the section. */
  end: readonly RegExp[];
  /** Marks a warning that delivery is only delayed (matched on the subject and the section). */
  delayed?: RegExp;
  /** The family's meaning when its text names no reason of its own (Google Groups: a refused sender). */
  reason?: BounceReason;
  /**
   * The family's own notice sentences and the reason each states (IMail's "Unknown user:" is its
   * directory's answer, not a remote server's terse reply), read in a recipient's text before
   * `reason`. The classifier takes a stated reason at that reason's turn (reason.ts).
   */
  states?: ReadonlyArray<readonly [BounceReason, RegExp]>;
  /** `states` speak only when the text names no refused command (Exim: a quoted remote reply to RCPT TO decides by its own words). */
  statesWithoutCommand?: boolean;
  /** The same, read from the notice itself when the family's notices differ (fml: a non-member's post, a loop, a security alert). */
  reasonOf?(m: InboundText, section: string): BounceReason | undefined;
  /**
   * Where the family writes a recipient, its address in group 1 (global flag): only those
   * addresses are recipients, not the others its section names (a list's help address, the
   * original's To). Absent: every address in the section that is not the sender's.
   */
  recipientAt?: RegExp;
  /**
   * The command the family's layout implies when the text names none (Yahoo's notice quotes the
   * remote reply that refused a recipient it names in angle brackets: that reply answered RCPT TO).
   */
  impliedCommand?(text: string): SmtpCommand | undefined;
  /** The reason is written above the recipients (Apache James: "Error message below:", then "Message details:"), so it is every recipient's diagnostic. */
  reasonFirst?: boolean;
}

/** The reason the family's own words state for this text (`states`, then `reasonOf`), else its fixed meaning. */
function statedReason(format: TextFormat, m: InboundText, section: string, text: string, command: SmtpCommand | undefined): BounceReason | undefined {
  const own = format.statesWithoutCommand && command ? [] : (format.states ?? []);
  for (const [reason, re] of own) if (re.test(text)) return reason;
  return format.reasonOf?.(m, section) ?? format.reason;
}

/** What a family's error section says, per recipient. */
export interface TextBounce {
  recipients: DsnRecipient[];
  original?: FieldBlock;
}

// Characters of an address's local part and of a domain, for addressesIn.
const LOCAL_CHAR = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]/;
const DOMAIN_CHAR = /[A-Za-z0-9.-]/;

/**
 * The addresses in running text (a local part, @, a dotted domain) with their offsets, found
 * around each @ by a scan outward, not a regular expression: linear in the text whatever it holds.
 * Dots that end or start an address (end of a sentence) are not part of it.
 */
export function addressesIn(text: string): Array<{ address: string; index: number }> {
  const out: Array<{ address: string; index: number }> = [];
  let at = text.indexOf('@');
  let scannedTo = 0;
  while (at !== -1) {
    let start = at;
    while (start > scannedTo && at - start < 64 && LOCAL_CHAR.test(text[start - 1]!)) start--;
    let end = at + 1;
    while (end < text.length && end - at <= 253 && DOMAIN_CHAR.test(text[end]!)) end++;
    while (start < at && (text[start] === '.' || text[start] === "'" || text[start] === '`')) start++;
    while (end > at + 1 && text[end - 1] === '.') end--;
    const domain = text.slice(at + 1, end);
    if (start < at && domain.includes('.') && !domain.startsWith('.') && !domain.includes('..')) {
      out.push({ address: text.slice(start, end), index: start });
    }
    scannedTo = end;
    at = text.indexOf('@', Math.max(end, at + 1));
  }
  return out;
}
const STATUS = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;
// Failure replies only: a 2xx in a bounce's text is a byte count or a greeting, never the refusal.
const REPLY_CODE = /(?:^|[\s:;(<[])([45]\d\d)(?=[\s:-]|$)/m;
// Where an address is the sender's, not a recipient's.
// Matched on the 20 characters before an address, their trailing spaces and bracket removed first.
const SENDER_CONTEXT = /(?:mail from:?|envelope-from|sender|\bfrom:?|f=\[|return-path:?)$/i;
const BOILERPLATE_ADDRESS = /^(?:mailer-daemon|postmaster|no-?reply|abuse)@/i;

/** The readable text of a parsed message (mailparser's text, else its HTML stripped). */
export function readableText(parsed: ParsedMail): string {
  const text = parsed.text ?? (typeof parsed.html === 'string' ? parsed.html.replace(/<br\s*\/?>/gi, '\n').replace(/<[^<>]*>/g, ' ') : '');
  // NUL cannot be stored in Postgres text (fields.ts drops it for the same reason): a report
  // carrying one would fail with a 451 on every retry of the reporting MTA.
  return text.replace(/\u0000/g, '').replace(/\r\n?/g, '\n');
}

/** The error section of `m` for `format`, and the returned original's header fields when they follow in the text. */
export function errorSection(m: InboundText, format: TextFormat): { section: string; rest: string } {
  let text = m.text;
  if (format.start) {
    const s = format.start.exec(text);
    if (s) {
      let from = s.index + s[0].length;
      if (format.startSkipsLine) {
        const eol = text.indexOf('\n', from);
        from = eol === -1 ? text.length : eol + 1;
      }
      text = text.slice(from);
    }
  }
  let end = text.length;
  for (const re of format.end) {
    const e = re.exec(text);
    if (e && e.index < end) end = e.index;
  }
  return { section: text.slice(0, end), rest: text.slice(end) };
}

/**
 * Reads a family's error section. Recipients are the addresses named in it that are not the
 * sender's (after MAIL FROM, in F=[...], the original's From or Return-Path) nor a daemon's;
 * each recipient's diagnostic is the text from its first mention to the next recipient's. When
 * that text has no status, code or words of its own (the reason came before the address, as in
 * "Unknown user: ann@..." or EZweb's notices), the text before the first recipient is added.
 */
export function readTextBounce(m: InboundText, format: TextFormat): TextBounce {
  const { section, rest } = errorSection(m, format);
  const original = originalHeaders(m, rest);
  const senders = new Set<string>();
  for (const name of ['from', 'return-path', 'sender']) {
    for (const v of original?.get(name) ?? []) for (const a of addressesIn(v)) senders.add(a.address.toLowerCase());
  }
  const mentions: { address: string; index: number }[] = [];
  for (const found of candidates(section, format.recipientAt)) {
    const address = found.address.toLowerCase();
    const before = trimEndOf(section.slice(Math.max(0, found.index - 20), found.index), ' \t\n<"[');
    if (SENDER_CONTEXT.test(before) || BOILERPLATE_ADDRESS.test(address)) {
      senders.add(address);
      continue;
    }
    if (!mentions.some((x) => x.address === address)) mentions.push({ address, index: found.index });
  }
  const named = mentions.filter((x) => !senders.has(x.address));
  const delayed = !!format.delayed && (format.delayed.test(m.subject) || format.delayed.test(section));
  const action = delayed ? 'delayed' : 'failed';
  if (!named.length) {
    // A failure that names nobody (the address was cut, or only the sender is quoted): one
    // recipient block without an address, read by the caller only for a mail it identified otherwise.
    const command = smtpCommand(section);
    const reason = statedReason(format, m, section, section, command);
    return { recipients: [{ action, ...facts(section), ...(command ? { command } : {}), ...(reason ? { reason } : {}) }], ...(original ? { original } : {}) };
  }
  const preamble = section.slice(0, named[0]!.index);
  const recipients = named.map((x, i) => {
    const end = i + 1 < named.length ? named[i + 1]!.index : section.length;
    const own = section.slice(x.index + x.address.length, end);
    const enough = !format.reasonFirst && (STATUS.test(own) || REPLY_CODE.test(own) || !!reasonOfText(normalize(own)));
    // Where the family says where recipients are written, the line naming one is part of what it says about it.
    const mention = format.recipientAt ? section.slice(x.index, end) : own;
    const text = enough ? own : format.reasonFirst ? preamble : format.recipientAt ? `${preamble}${mention}` : `${preamble}\n${own}`;
    const f = facts(text);
    const command = (format.reasonFirst ? smtpCommand(preamble) : smtpCommand(own) ?? smtpCommand(section)) ?? format.impliedCommand?.(own);
    const reason = statedReason(format, m, section, text, command);
    return { finalRecipient: x.address, action, ...f, ...(command ? { command } : {}), ...(reason ? { reason } : {}) };
  });
  return { recipients, ...(original ? { original } : {}) };
}

/** The addresses of a section that may be recipients: all of them, or those where the family writes a recipient. */
function candidates(section: string, at: RegExp | undefined): Array<{ address: string; index: number }> {
  if (!at) return addressesIn(section);
  const out: Array<{ address: string; index: number }> = [];
  for (const match of section.matchAll(at)) {
    const inner = match[1] ?? '';
    const offset = match.index! + match[0].indexOf(inner);
    for (const found of addressesIn(inner)) out.push({ address: found.address, index: offset + found.index });
  }
  return out;
}

/** The status, reply code and diagnostic text of one recipient's part of a section. */
export function facts(text: string): Pick<DsnRecipient, 'status' | 'code' | 'diagnostic'> {
  const diagnostic = text.replace(/\n[ \t]*\n+/g, '\n').trim().slice(0, 2000);
  const status = statusCode(STATUS.exec(text)?.[0]);
  const codeMatch = REPLY_CODE.exec(text);
  const code = codeMatch ? Number(codeMatch[1]) : undefined;
  return { ...(status ? { status } : {}), ...(code !== undefined ? { code } : {}), ...(diagnostic ? { diagnostic } : {}) };
}

/** The returned original's header fields: an attached message, else the text after the section's end marker. */
export function originalHeaders(m: InboundText, rest: string): FieldBlock | undefined {
  const attached = m.parsed.attachments.find((a) => /^(message\/(rfc822|global)|text\/rfc822-headers|message\/rfc822-headers)$/i.test(a.contentType));
  if (attached) return headerBlock(attached.content.toString('utf8'));
  // After the marker line, the original's header section.
  const afterMarker = rest.replace(/^[^\n]*\n/, '').replace(/^\s*\n/, '');
  if (!/^[A-Za-z0-9-]+:/.test(afterMarker)) return undefined;
  const block = headerBlock(afterMarker);
  return block.size ? block : undefined;
}

/** Whether the message's author is a mail system (the usual sign of a bounce). */
export function fromMailSystem(m: InboundText): boolean {
  return /^(mailer-daemon|post_?master|mail-?daemon|mmdf|root|mail delivery|maildelivery)\b/i.test(m.from) || /mailer-daemon|postmaster/i.test(m.header('from') ?? '');
}

function trimEndOf(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1]!)) end--;
  return s.slice(0, end);
}
