import type { FeedbackReport } from '../arf.js';
import type { DeliveryStatusReport, DsnRecipient } from '../dsn.js';
import { statusCode } from '../dsn.js';
import type { FieldBlock } from '../fields.js';
import type { InboundText } from './text.js';

/**
 * Amazon SES notifications delivered by e-mail (an SNS topic's subscription): the body is the
 * JSON notification. Bounce: bouncedRecipients with status and diagnosticCode (bounceType
 * Permanent or Transient); Complaint: complainedRecipients (a feedback loop report relayed by
 * SES); Delivery: nothing to do. The original is named by mail.headers (Message-ID, X-Cartero-Mail-Id).
 */
export type SesNotification =
  | { kind: 'bounce'; report: DeliveryStatusReport }
  | { kind: 'complaint'; report: FeedbackReport }
  | { kind: 'delivery' };

interface SesJson {
  notificationType?: string;
  eventType?: string;
  bounce?: { bounceType?: string; bouncedRecipients?: { emailAddress?: string; status?: string; action?: string; diagnosticCode?: string }[] };
  complaint?: { complaintFeedbackType?: string; userAgent?: string; arrivalDate?: string; complainedRecipients?: { emailAddress?: string }[] };
  mail?: { headers?: { name?: string; value?: string }[]; destination?: string[] };
}

export function detectSes(m: InboundText): boolean {
  return /amazonaws\.com$|amazonses\.com$/i.test(m.from) && /^\s*\{\s*"(?:notificationType|eventType)"/.test(m.text);
}

export function readSes(m: InboundText): SesNotification | undefined {
  const json = m.text.slice(m.text.indexOf('{'), m.text.lastIndexOf('}') + 1);
  let n: SesJson;
  try {
    n = JSON.parse(json.replace(/\n/g, '')) as SesJson;
  } catch {
    return undefined;
  }
  const original: FieldBlock = new Map();
  for (const h of n.mail?.headers ?? []) {
    if (!h.name || typeof h.value !== 'string') continue;
    const name = h.name.toLowerCase();
    original.set(name, [...(original.get(name) ?? []), h.value]);
  }
  const type = (n.notificationType ?? n.eventType ?? '').toLowerCase();
  if (type === 'bounce' && n.bounce) {
    const transient = n.bounce.bounceType === 'Transient';
    const recipients: DsnRecipient[] = (n.bounce.bouncedRecipients ?? []).map((r) => {
      const status = statusCode(r.status);
      const diagnostic = r.diagnosticCode?.replace(/^smtp;\s*/i, '');
      return {
        finalRecipient: r.emailAddress?.toLowerCase(),
        // A transient bounce is SES giving up after retries: failed, soft unless the words say otherwise.
        action: (r.action ?? 'failed').toLowerCase() === 'failed' || transient ? 'failed' : r.action!.toLowerCase(),
        ...(status ? { status } : {}),
        ...(diagnostic ? { diagnostic, diagnosticType: 'smtp' } : {}),
      };
    });
    return { kind: 'bounce', report: { recipients, original } };
  }
  if (type === 'complaint' && n.complaint) {
    const arrival = n.complaint.arrivalDate ? Date.parse(n.complaint.arrivalDate) : NaN;
    return {
      kind: 'complaint',
      report: {
        feedbackType: (n.complaint.complaintFeedbackType ?? 'abuse').toLowerCase(),
        ...(n.complaint.userAgent ? { userAgent: n.complaint.userAgent } : {}),
        ...(Number.isFinite(arrival) ? { arrivalDate: new Date(arrival) } : {}),
        originalRcptTo: (n.complaint.complainedRecipients ?? []).map((r) => r.emailAddress?.toLowerCase()).filter((a): a is string => !!a),
        original,
      },
    };
  }
  if (type === 'delivery') return { kind: 'delivery' };
  return undefined;
}
