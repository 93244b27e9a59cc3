import { parseDeliveryStatus, readDsn, type DeliveryStatusReport, type DsnRecipient } from '../dsn.js';
import { field, untyped } from '../fields.js';
import { smtpCommand } from '../reason.js';
import { originalHeaders, type InboundText } from './text.js';

/**
 * RFC 3464 / RFC 6533 delivery status notifications: the message/delivery-status part (dsn.ts).
 * `fromText`: when the MIME structure is damaged (a wrong boundary, a missing Content-Type, the
 * report pasted into a text part: mailparser then sees no delivery-status part), the same fields
 * are looked for in the text: a block with Action and a recipient field, read by the same parser.
 */
export function readRfc3464(m: InboundText, fromText = false): DeliveryStatusReport | undefined {
  const dsn = fromText ? dsnFromText(m, m.text) : readDsn(m.parsed);
  if (!dsn) return undefined;
  // The human-readable part often says which command was refused (Postfix: "in reply to end of DATA command").
  const command = smtpCommand(m.text);
  // A block without Diagnostic-Code (Google's DSNs): the human-readable part says why ("The
  // address couldn't be found"), up to the DSN fields when they were pasted into the text.
  const human = m.text.slice(0, Math.max(0, m.text.search(/^(?:Reporting-MTA|Final-Recipient|Original-Recipient|Action):/im)) || m.text.length).trim().slice(0, 2000);
  return {
    ...dsn,
    recipients: dsn.recipients
      .map(sesReply)
      .map((r) => ({ ...(command ? { command } : {}), ...(!r.diagnostic && human ? { diagnostic: human, diagnosticType: 'x-human' } : {}), ...(human ? { human } : {}), ...r })),
  };
}

// A recipient block's fields as text: Final-Recipient (or Original-) and Action, in any order.
const RECIPIENT_FIELD = /^(?:Final|Original)-Recipient:[^\n]*$/im;
const ACTION_FIELD = /^Action:\s*(?:failed|delayed|expired|delivered|relayed|expanded)\b/im;

export function dsnFromText(m: InboundText, text: string): DeliveryStatusReport | undefined {
  const action = ACTION_FIELD.exec(text);
  const recipient = RECIPIENT_FIELD.exec(text);
  if (!action || !recipient) return undefined;
  // From the first DSN field to the returned original (or a boundary line), dropping MIME noise.
  const first = text.search(/^(?:Reporting-MTA|Original-Envelope-Id|Arrival-Date|Final-Recipient|Original-Recipient|Action):/im);
  let body = text.slice(first);
  const stop = body.search(/^(?:--[^\n]*|Content-Type: (?:message|text)\/[^\n]*|Received: [^\n]*)$/im);
  if (stop > 0) body = body.slice(0, stop);
  const { message, recipients } = parseDeliveryStatus(body);
  if (!recipients.length) return undefined;
  const original = originalHeaders(m, text.slice(first + (stop > 0 ? stop : body.length)));
  return {
    reportingMta: untyped(field(message, 'reporting-mta'))?.value,
    recipients,
    ...(original ? { original } : {}),
  };
}


/**
 * Amazon SES writes its own description before the remote server's reply, quoted: "5.1.0 -
 * Unknown address error 550-'5.7.1 <...>... Access denied' (delivery attempts: 0)". The quoted
 * reply is what the remote server said; SES's description is a generic label of the status.
 */
const SES_DIAGNOSTIC = /^\d\.\d{1,3}\.\d{1,3} - [^']*?\b([245]\d\d)[- ]'([^']*)'/;

function sesReply(r: DsnRecipient): DsnRecipient {
  const m = r.diagnostic ? SES_DIAGNOSTIC.exec(r.diagnostic) : null;
  return m ? { ...r, diagnostic: `${m[1]} ${m[2]}` } : r;
}
