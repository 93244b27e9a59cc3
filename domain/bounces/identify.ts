import { isId } from '../mail/ids.js';
import { field, type FieldBlock } from '../../engines/bounces/fields.js';

/**
 * Which mail a report names, and the tag that proves the reporter saw it (report-tag.ts).
 * Cartero sends every mail with a VERP return path `bounce+<MAILID>.<TAG>@<sender domain>`
 * (domain/mail/render.ts), so a DSN addressed there names its mail; feedback loops report to a
 * fixed address instead, and the mail is named by the returned original's X-Cartero-Mail-Id
 * (`MAILID.TAG`) or Message-ID (`<MAILID.TAG@domain>`). Mails sent before tags existed named
 * themselves without one; such references come back with `tag` undefined.
 *
 * Mail ids are upper-case ULIDs. Matching is case-insensitive because MTAs may lower-case the
 * local part (RFC 5321 lets the receiving domain treat it as it likes, and many do).
 */
export interface MailReference {
  mailId: string;
  tag: string | undefined;
}

// Both anchored, each part a single character class: linear on any input.
const VERP = /^bounce\+([0-9a-z]{26})(?:\.([0-9a-z]{1,40}))?@[^@\s]+$/i;
const TAGGED_ID = /^([0-9a-z]{26})(?:\.([0-9a-z]{1,40}))?$/i;

function reference(id: string | undefined, tag: string | undefined): MailReference | undefined {
  const mailId = id?.toUpperCase();
  return mailId && isId(mailId) ? { mailId, tag: tag?.toLowerCase() } : undefined;
}

/** The mail a VERP return path names, undefined for any other address. */
export function referenceFromVerp(address: string): MailReference | undefined {
  const m = VERP.exec(address.trim());
  return m ? reference(m[1], m[2]) : undefined;
}

/** Whether an address has the VERP shape (even if what it names is no mail). */
export function isVerpAddress(address: string): boolean {
  return /^bounce\+[^@]*@/i.test(address.trim());
}

/**
 * The mails a returned original's header fields name, if they are Cartero's: X-Cartero-Mail-Id
 * first, then Message-ID (both usually name the same mail; a report is applied when either
 * reference verifies).
 */
export function referencesFromOriginal(headers: FieldBlock | undefined): MailReference[] {
  const out: MailReference[] = [];
  const own = field(headers, 'x-cartero-mail-id')?.trim();
  const fromOwn = own ? TAGGED_ID.exec(own) : null;
  if (fromOwn) pushNew(out, reference(fromOwn[1], fromOwn[2]));
  const messageId = field(headers, 'message-id')?.trim().replace(/^</, '').replace(/>$/, '').trim();
  const at = messageId?.lastIndexOf('@') ?? -1;
  const fromMessageId = messageId && at > 0 ? TAGGED_ID.exec(messageId.slice(0, at)) : null;
  if (fromMessageId) pushNew(out, reference(fromMessageId[1], fromMessageId[2]));
  return out;
}

function pushNew(list: MailReference[], ref: MailReference | undefined): void {
  if (ref && !list.some((r) => r.mailId === ref.mailId && r.tag === ref.tag)) list.push(ref);
}
