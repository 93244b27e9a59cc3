import type { TextFormat } from './text.js';

/** qmail's qmail-send: "Hi. This is the qmail-send program at ...", then `<address>:` and the remote reply; "(#5.1.1)" carries the status. */
export const qmail: TextFormat = {
  name: 'qmail',
  detect: (m) => /This is the qmail-send program|I'm afraid I wasn't able to deliver your message|I'm not going to try again; this message has been in the queue too long/.test(m.text),
  start: /I'm afraid I wasn't able to deliver/,
  startSkipsLine: true,
  end: [/^--- Below this line is a copy of the message/m, /^--- Enclosed is a copy of the message/m, /^--- Below this line is the original message/m],
};
