import type { TextFormat } from './text.js';

/** Trend Micro InterScan MSS: "Unable to deliver message to <address>", or the session ("Sent <<< RCPT TO:", "Received >>> 550 ..."). */
export const interscan: TextFormat = {
  name: 'InterScanMSS',
  detect: (m) => /InterScan/i.test(m.header('from') ?? '') || /Message from InterScan Messaging Security Suite/i.test(m.text),
  end: [/^\*+ +End of message +\*+/m],
  // InterScan's own notice ("Unable to deliver message to <x> (and other recipients in the same
  // domain)") is what it writes when the next hop refused the recipient.
  reason: 'userunknown',
};
