import type { ParsedMail } from 'mailparser';
import { ORIGINAL_TYPES } from './dsn.js';
import { addressOf, field, headerBlock, parseFieldBlocks, type FieldBlock } from './fields.js';

/**
 * Feedback-loop reports (ARF, RFC 5965): a mailbox provider tells the sender that a recipient
 * marked a message as spam. A multipart/report; report-type=feedback-report whose
 * message/feedback-report part is one block of fields, followed by the original message (or
 * its header section), which is what names Cartero's mail.
 */
export interface FeedbackReport {
  /** Lower-cased; `abuse` when the report left it out (the only type feedback loops send in practice). */
  feedbackType: string;
  /** The reporting system (User-Agent field). */
  userAgent?: string;
  version?: string;
  arrivalDate?: Date;
  originalMailFrom?: string;
  originalRcptTo: string[];
  /** Header fields of the original, when the report includes it. */
  original?: FieldBlock;
}

/**
 * Types that say a recipient complained. `not-spam` (RFC 6430) is the opposite, and
 * `auth-failure` (RFC 6591) is a DMARC/SPF failure report, not a person's complaint: both are
 * read and not recorded.
 */
export const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other', 'opt-out']);

/** The report in a message parsed by parseReportMessage (engines/bounces/report-message.ts), if any. */
export function readArf(parsed: ParsedMail): FeedbackReport | undefined {
  const part = parsed.attachments.find((a) => a.contentType.toLowerCase() === 'message/feedback-report');
  if (!part) return undefined;
  const block = parseFieldBlocks(part.content.toString('utf8'))[0] ?? new Map();
  const original = parsed.attachments.find((a) => ORIGINAL_TYPES.has(a.contentType.toLowerCase()));
  const arrival = field(block, 'arrival-date') ?? field(block, 'received-date');
  const arrivalTime = arrival ? Date.parse(arrival) : NaN;
  return {
    feedbackType: (field(block, 'feedback-type') ?? 'abuse').split(/[\s;(]/)[0]!.toLowerCase(),
    userAgent: field(block, 'user-agent'),
    version: field(block, 'version'),
    ...(Number.isFinite(arrivalTime) ? { arrivalDate: new Date(arrivalTime) } : {}),
    originalMailFrom: addressOf(field(block, 'original-mail-from')),
    originalRcptTo: (block.get('original-rcpt-to') ?? []).map((v) => addressOf(v)).filter((v): v is string => !!v),
    ...(original ? { original: headerBlock(original.content.toString('utf8')) } : {}),
  };
}
