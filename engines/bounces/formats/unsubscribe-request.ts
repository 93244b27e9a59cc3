import type { FeedbackReport } from '../arf.js';
import type { InboundText } from './text.js';

/**
 * An unsubscribe request sent by the recipient's mail client rather than a feedback loop: Apple
 * Mail's (X-Apple-Unsubscribe: true, subject "unsubscribe"), the RFC 2369 mailto: form. Read as
 * an opt-out feedback report (RFC 5965's `opt-out` type) from the person in From: the recipient
 * asked to stop, which Cartero records like an opt-out from a feedback loop.
 */
export function readUnsubscribeRequest(m: InboundText): FeedbackReport | undefined {
  const apple = (m.header('x-apple-unsubscribe') ?? '').trim().toLowerCase() === 'true';
  if (!apple && !(/^unsubscribe$/i.test(m.subject.trim()) && m.text.trim().length < 500)) return undefined;
  return { feedbackType: 'opt-out', ...(apple ? { userAgent: 'Apple Mail' } : {}), originalRcptTo: m.from ? [m.from] : [] };
}
