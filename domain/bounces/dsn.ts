import type { ParsedMail } from 'mailparser';
import { bounceClassOf, parseSmtpReply } from '../mail/smtp-reply.js';
import { addressOf, field, headerBlock, parseFieldBlocks, untyped, type FieldBlock } from './fields.js';

/**
 * Delivery status notifications (RFC 3464): what a remote MTA sends back to the return path when
 * it gave up on a mail (Action: failed) or is still trying (Action: delayed), after having
 * accepted it with a 250. The report is a multipart/report whose message/delivery-status part
 * holds one block of per-message fields, then one block per recipient.
 */
export interface DsnRecipient {
  /** Lower-cased addresses, without their `rfc822;` type. */
  finalRecipient?: string;
  originalRecipient?: string;
  /** failed, delayed, delivered, relayed or expanded (lower-cased). */
  action?: string;
  /** The RFC 3463 status code, normalized (`5.1.1`), when one was given. */
  status?: string;
  /** Diagnostic-Code without its type: for type smtp, the remote server's reply. */
  diagnostic?: string;
  diagnosticType?: string;
  remoteMta?: string;
}

export interface DeliveryStatusReport {
  reportingMta?: string;
  arrivalDate?: Date;
  recipients: DsnRecipient[];
  /** Header fields of the returned original (message/rfc822 or text/rfc822-headers), when it came back. */
  original?: FieldBlock;
}

const STATUS = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

function statusCode(value: string | undefined): string | undefined {
  const m = value ? STATUS.exec(value) : null;
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : undefined;
}

function date(value: string | undefined): Date | undefined {
  const t = value ? Date.parse(value) : NaN;
  return Number.isFinite(t) ? new Date(t) : undefined;
}

/**
 * The body of a message/delivery-status part. Blocks that carry recipient fields are recipient
 * blocks; the others are per-message fields (so a report that forgot its per-message block, or
 * put it last, still reads).
 */
export function parseDeliveryStatus(text: string): { message: FieldBlock; recipients: DsnRecipient[] } {
  const message: FieldBlock = new Map();
  const recipients: DsnRecipient[] = [];
  for (const block of parseFieldBlocks(text)) {
    if (!block.has('final-recipient') && !block.has('action') && !block.has('original-recipient')) {
      for (const [k, v] of block) message.set(k, [...(message.get(k) ?? []), ...v]);
      continue;
    }
    const diagnostic = untyped(field(block, 'diagnostic-code'));
    recipients.push({
      finalRecipient: addressOf(field(block, 'final-recipient')),
      originalRecipient: addressOf(field(block, 'original-recipient')),
      action: field(block, 'action')?.split(/[\s(]/)[0]?.toLowerCase() || undefined,
      status: statusCode(field(block, 'status')),
      ...(diagnostic?.value ? { diagnostic: diagnostic.value, diagnosticType: diagnostic.type } : {}),
      remoteMta: untyped(field(block, 'remote-mta'))?.value,
    });
  }
  return { message, recipients };
}

// message/global-delivery-status is RFC 6533's UTF-8 variant; same fields.
const STATUS_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
export const ORIGINAL_TYPES = new Set(['message/rfc822', 'message/global', 'text/rfc822-headers', 'message/rfc822-headers', 'message/global-headers']);

/**
 * The report in a message parsed by parseReportMessage (report-message.ts), or undefined when
 * the message carries none.
 * A delivery-status part is what makes a DSN: some MTAs get the report-type parameter wrong.
 */
export function readDsn(parsed: ParsedMail): DeliveryStatusReport | undefined {
  const part = parsed.attachments.find((a) => STATUS_TYPES.has(a.contentType.toLowerCase()));
  if (!part) return undefined;
  const { message, recipients } = parseDeliveryStatus(part.content.toString('utf8'));
  const original = parsed.attachments.find((a) => ORIGINAL_TYPES.has(a.contentType.toLowerCase()));
  return {
    reportingMta: untyped(field(message, 'reporting-mta'))?.value,
    arrivalDate: date(field(message, 'arrival-date')),
    recipients,
    ...(original ? { original: headerBlock(original.content.toString('utf8')) } : {}),
  };
}

export type DsnVerdict =
  | {
      kind: 'failed' | 'delayed';
      /** Set for failed. */
      bounceClass?: 'hard' | 'soft';
      status?: string;
      smtpCode?: number;
      diagnostic?: string;
    }
  | { kind: 'none'; why: string };

/**
 * What a report means for one mail (Cartero sends one recipient per mail). Only the recipient
 * blocks about the mail's own address are read (Final- or Original-Recipient): a report changes
 * only the mail whose recipient it names, so a block about anyone else never bounces this mail
 * (and a forward that rewrote the address without an Original-Recipient changes nothing). A
 * failure wins over a delay; delivered, relayed and expanded change nothing.
 *
 * Failed: hard or soft by the same rule as a synchronous 5xx (domain/mail/smtp-reply.ts), so a
 * late 5.1.1 is hard while a late 5.2.2 (mailbox full) or 5.7.1 (policy) is soft; a 4.x.x is
 * soft (the MTA gave up retrying, the address may be fine). The status comes from Status, else
 * from an SMTP Diagnostic-Code; a failure with neither is soft (nothing says the address is bad).
 */
/** Whether a recipient block is about `address` (lower-cased). */
export function namesRecipient(block: DsnRecipient, address: string): boolean {
  return block.finalRecipient === address || block.originalRecipient === address;
}

export function dsnVerdict(report: DeliveryStatusReport, mailRecipient: string): DsnVerdict {
  const to = mailRecipient.trim().toLowerCase();
  const about = report.recipients.filter((r) => namesRecipient(r, to));
  const chosen = about.find((r) => r.action === 'failed') ?? about.find((r) => r.action === 'delayed');
  if (!chosen) {
    return { kind: 'none', why: about.length ? `action ${about.map((r) => r.action ?? '?').join(',')}` : "no recipient block names the mail's recipient" };
  }
  const reply = chosen.diagnostic && (chosen.diagnosticType === undefined || chosen.diagnosticType === 'smtp') ? parseSmtpReply(chosen.diagnostic) : undefined;
  const status = chosen.status ?? reply?.enhanced;
  const cls = status?.[0];
  const smtpCode = reply?.code !== undefined && (cls === undefined || String(reply.code)[0] === cls) ? reply.code : undefined;
  const base = { ...(status ? { status } : {}), ...(smtpCode !== undefined ? { smtpCode } : {}), ...(chosen.diagnostic ? { diagnostic: chosen.diagnostic } : {}) };
  if (chosen.action === 'delayed') return { kind: 'delayed', ...base };
  let bounceClass: 'hard' | 'soft' = 'soft';
  if (cls === '5') bounceClass = bounceClassOf(smtpCode ?? 550, status);
  else if (cls === undefined && smtpCode !== undefined && smtpCode >= 500) bounceClass = bounceClassOf(smtpCode, undefined);
  return { kind: 'failed', bounceClass, ...base };
}
