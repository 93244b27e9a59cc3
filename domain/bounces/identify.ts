import { isId } from '../mail/ids.js';
import { field, type FieldBlock } from './fields.js';

/**
 * Which mail a report is about. Cartero sends every mail with a VERP return path
 * `bounce+<MAILID>@<sender domain>` (domain/mail/render.ts), so a DSN addressed there names its
 * mail; feedback loops report to a fixed address instead, and the mail is named by the returned
 * original's X-Cartero-Mail-Id or Message-ID `<MAILID@domain>`.
 *
 * Mail ids are upper-case ULIDs. Matching is case-insensitive because MTAs may lower-case the
 * local part (RFC 5321 lets the receiving domain treat it as it likes, and many do).
 */
const VERP = /^bounce\+([0-9a-z]{26})@[^@\s]+$/i;

function asMailId(candidate: string | undefined): string | undefined {
  const id = candidate?.trim().toUpperCase();
  return id && isId(id) ? id : undefined;
}

/** The mail id of a VERP return path, undefined for any other address. */
export function mailIdFromVerp(address: string): string | undefined {
  const m = VERP.exec(address.trim());
  return m ? asMailId(m[1]) : undefined;
}

/** Whether an address has the VERP shape (even if the id in it names no mail). */
export function isVerpAddress(address: string): boolean {
  return /^bounce\+[^@]*@/i.test(address.trim());
}

/** The mail id named by a returned original's header fields, if it is one of Cartero's. */
export function mailIdFromOriginal(headers: FieldBlock | undefined): string | undefined {
  const own = asMailId(field(headers, 'x-cartero-mail-id'));
  if (own) return own;
  const messageId = field(headers, 'message-id');
  const m = messageId ? /<?\s*([0-9A-Za-z]{26})@[^>\s]+\s*>?/.exec(messageId) : null;
  return m ? asMailId(m[1]) : undefined;
}
