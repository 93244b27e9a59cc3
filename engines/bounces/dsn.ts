import type { ParsedMail } from 'mailparser';
import { parseSmtpReply } from './smtp-reply.js';
import type { BounceReason } from './reason-names.js';
import { isFinalExpiry } from './expiry.js';
import { preferredStatus, statusInText } from './status-choice.js';
import { classifyFailure, normalize, reasonOfText, smtpCommand, type SmtpCommand } from './reason.js';
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
  /** The reply code, when a text format gives it apart from the diagnostic (formats/text.ts). */
  code?: number;
  /** The reason a format states for its family when the text says none (formats/googlegroups.ts). */
  reason?: BounceReason;
  /** The refused SMTP command, when the report's text says (reason.ts smtpCommand). */
  command?: SmtpCommand;
  /** A DSN's human-readable part (formats/rfc3464.ts), read only to contradict a hard verdict. */
  human?: string;
}

export interface DeliveryStatusReport {
  reportingMta?: string;
  arrivalDate?: Date;
  recipients: DsnRecipient[];
  /** Header fields of the returned original (message/rfc822 or text/rfc822-headers), when it came back. */
  original?: FieldBlock;
}

const STATUS = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

export function statusCode(value: string | undefined): string | undefined {
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
      /** Why it failed (reason.ts), set for failed and delayed. */
      reason?: BounceReason;
      status?: string;
      smtpCode?: number;
      diagnostic?: string;
    }
  | { kind: 'none'; why: string };

/** Whether a recipient block is about `address` (lower-cased). */
export function namesRecipient(block: DsnRecipient, address: string): boolean {
  return block.finalRecipient === address || block.originalRecipient === address;
}

// RFC 3464 says failed; some MTAs write what happened instead (Action: expired): the MTA gave up.
const FAILED = new Set(['failed', 'expired']);
const RFC3464_ACTIONS = new Set(['failed', 'delayed', 'delivered', 'relayed', 'expanded', 'expired']);

/**
 * A block's action as the reference analyser reads it: "failure" is failed, "deliverable"
 * delivered; any other value, or none, beside a 4.x.x or 5.x.x status (or a 4xx/5xx reply in
 * the diagnostic) is a failure, since the status says delivery did not happen. Without this an
 * MTA that writes `Action: undeliverable` or leaves the field out (a system error report) would
 * be left unapplied.
 */
function actionOf(r: DsnRecipient): string {
  const action = r.action ?? '';
  if (RFC3464_ACTIONS.has(action)) return action;
  if (action === 'failure') return 'failed';
  if (action === 'deliverable') return 'delivered';
  const cls = r.status?.[0] ?? (r.diagnostic ? /^\s*([45])\d\d\b/.exec(r.diagnostic)?.[1] : undefined);
  return cls === '4' || cls === '5' ? 'failed' : action;
}

/**
 * What a report means for one mail (Cartero sends one recipient per mail). Only the recipient
 * blocks about the mail's own address are read (Final- or Original-Recipient): a report changes
 * only the mail whose recipient it names, so a block about anyone else never bounces this mail.
 * `provenByReturnPath`: the caller proved the report is about this mail by other means (it came
 * to this mail's tagged VERP return path, and to no other) and lets a report that names other
 * addresses, or none, stand for the mail's recipient (text bounces often name an alias, a
 * forward target, an expanded list's members, or nobody). Then, when its blocks disagree, the
 * least severe verdict wins: one soft block among hard ones makes the mail's bounce soft, so
 * a forward or a list never restricts the address we wrote to for a failure it did not share.
 * A failure wins over a delay; delivered, relayed and expanded change nothing.
 *
 * Failed: classified by reason.ts from the status, the reply code and the diagnostic's words:
 * hard only when the reason says the address is dead (a late 5.1.1, "user unknown"), soft for
 * everything else (mailbox full, blocks, policy, a 4.x.x the MTA gave up on, no status at all).
 */
export function dsnVerdict(report: DeliveryStatusReport, mailRecipient: string, provenByReturnPath = false): DsnVerdict {
  const to = mailRecipient.trim().toLowerCase();
  let about = report.recipients.filter((r) => namesRecipient(r, to));
  if (!about.length && provenByReturnPath) about = report.recipients;
  let failed = about.filter((r) => FAILED.has(actionOf(r))).map(blockVerdict);
  // Blocks that say why (an address picked from quoted headers says nothing) speak for the report.
  const informed = failed.filter((v) => v.reason !== 'onhold' && v.reason !== 'undefined');
  if (informed.length) failed = informed;
  if (failed.length) return failed.find((v) => v.bounceClass === 'soft') ?? failed[0]!;
  const delayed = about.find((r) => actionOf(r) === 'delayed');
  if (delayed) return blockVerdict(delayed);
  return { kind: 'none', why: about.length ? `action ${about.map((r) => r.action ?? '?').join(',')}` : "no recipient block names the mail's recipient" };
}

function blockVerdict(chosen: DsnRecipient): Extract<DsnVerdict, { kind: 'failed' | 'delayed' }> {
  const reply = chosen.diagnostic && (chosen.diagnosticType === undefined || chosen.diagnosticType === 'smtp') ? parseSmtpReply(chosen.diagnostic) : undefined;
  const code = chosen.code ?? reply?.code;
  const fromWords = chosen.diagnosticType === undefined || chosen.diagnosticType === 'smtp' ? reply?.enhanced ?? statusInText(chosen.diagnostic) : undefined;
  const status = preferredStatus(chosen.status, fromWords, code);
  const cls = status?.[0];
  const smtpCode = code !== undefined && (cls === undefined || String(code)[0] === cls) ? code : undefined;
  const base = { ...(status ? { status } : {}), ...(smtpCode !== undefined ? { smtpCode } : {}), ...(chosen.diagnostic ? { diagnostic: chosen.diagnostic } : {}) };
  const { reason, bounceClass } = classifyFailure(
    {
      status,
      code: smtpCode,
      diagnostic: chosen.diagnostic,
      action: chosen.action,
      // The server's own words name the command first; else what the report's text said (rfc3464.ts, a text family).
      command: (chosen.diagnostic ? smtpCommand(chosen.diagnostic) : undefined) ?? chosen.command,
      // The human-readable part standing in for a missing Diagnostic-Code is a text without a type.
      diagnosticType: chosen.diagnosticType && chosen.diagnosticType !== 'x-human' ? chosen.diagnosticType.toLowerCase() : undefined,
    },
    chosen.reason,
  );
  if (chosen.action === 'delayed') {
    // A "delay" report that says the queue gave up is the final failure: a soft bounce (expired).
    if (isFinalExpiry(status, `${chosen.diagnostic ?? ''}\n${chosen.human ?? ''}`)) return { kind: 'failed', bounceClass: 'soft', reason: 'expired', ...base };
    return { kind: 'delayed', reason, ...base };
  }
  // Hard needs every signal to agree: a human-readable part that names a specific live-mailbox
  // cause (full, suspended, spam, authentication...) beside fields that say "user unknown" wins.
  const said = bounceClass === 'hard' && chosen.human ? reasonOfText(normalize(chosen.human)) : undefined;
  if (said && CONTRADICTS_HARD.has(said)) return { kind: 'failed', bounceClass: 'soft', reason: said, ...base };
  return { kind: 'failed', bounceClass, reason, ...base };
}

/** Reasons whose words, in a DSN's human-readable part, are specific enough to overrule a hard status. */
const CONTRADICTS_HARD = new Set<BounceReason>(['mailboxfull', 'suspend', 'mesgtoobig', 'exceedlimit', 'spamdetected', 'virusdetected', 'authfailure', 'requireptr', 'filtered']);
