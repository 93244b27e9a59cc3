import type { TextFormat } from './text.js';

/** Yahoo! Mail: "Sorry, we were unable to deliver your message to the following address.", `<address>:`, "Remote host said: ...". */
export const yahoo: TextFormat = {
  name: 'Yahoo',
  detect: (m) => /Sorry, we were unable to deliver your message to the following address/i.test(m.text),
  start: /Sorry, we were unable to deliver your message to the following address/i,
  startSkipsLine: true,
  end: [/^--- Below this line is a copy of the message/m],
  // The remote reply under a recipient names an address in angle brackets ("550: <a@b>: User
  // unknown"): Yahoo quotes the reply that refused that recipient, at RCPT TO (Sisimai's Yahoo module reads it so).
  impliedCommand: (text) => (/<[^<>\s@]+@[^<>\s@]+>/.test(text) ? 'RCPT' : undefined),
};
