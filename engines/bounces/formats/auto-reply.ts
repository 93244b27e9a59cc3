import type { InboundText } from './text.js';

/**
 * Auto-replies (RFC 3834 and the vacation programs before it): an answer of the recipient's
 * mailbox, not of a mail system. They change nothing: the address works. Recognised by
 * Auto-Submitted: auto-replied, the X-Autoreply family of fields, Precedence: auto_reply, or an
 * out-of-office subject; a bounce from a mail daemon (Exim also sets Auto-Submitted) is read as
 * a bounce before this is asked.
 */
const SUBJECT = /^(?:auto(?:matic)?[- ]?(?:reply|response|answer)|out of (?:the )?office|away from|vacation|abwesenheit|absence|r[ée]ponse automatique|automatische antwort|respuesta autom[áa]tica|自動応答|不在)/i;

export function isAutoReply(m: InboundText): boolean {
  const auto = m.header('auto-submitted')?.toLowerCase() ?? '';
  if (auto.startsWith('auto-replied')) return true;
  if (m.header('x-autoreply') || m.header('x-autorespond') || m.header('x-autoresponder')) return true;
  if (/auto_?reply/i.test(m.header('precedence') ?? '')) return true;
  if (/(^|\b)(OOF|AutoReply)\b/i.test(m.header('x-auto-response-suppress') ?? '') && SUBJECT.test(m.subject)) return true;
  return SUBJECT.test(m.subject.trim()) || /^(?:I am|I'm) (?:currently )?(?:away|out of (?:the )?office)/i.test(m.text.trim());
}
