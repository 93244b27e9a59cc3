import type { TextFormat } from './text.js';

/** qmail's qmail-send: "Hi. This is the qmail-send program at ...", then `<address>:` and the remote reply; "(#5.1.1)" carries the status. */
export const qmail: TextFormat = {
  name: 'qmail',
  detect: (m) => /This is the qmail-send program|I'm afraid I wasn't able to deliver your message|I'm not going to try again; this message has been in the queue too long/.test(m.text),
  start: /I'm afraid I wasn't able to deliver/,
  startSkipsLine: true,
  end: [/^--- Below this line is a copy of the message/m, /^--- Enclosed is a copy of the message/m, /^--- Below this line is the original message/m],
  // qmail-send's own sentences (not a remote server's reply) and what each means.
  states: [
    ['hostunknown', /couldn't find any host (?:named|by that name)/i],
    ['networkerror', /wasn't able to establish an SMTP connection|listed as a best-preference MX/i],
    ['mailboxfull', /disk quota exceeded/i],
    ['mesgtoobig', /message size exceeds fixed maximum message size/i],
    ['suspend', /administrat[a-z]{0,6}ly disabled/i],
    ['exceedlimit', /exc?eeded the maximum size the user accepts/i],
    // "in the queue too long" is the queue's verdict only when no remote server refused the recipient.
    ['expired', /^(?![\s\S]*does not like recipient)[\s\S]*in the queue too long/i],
  ],
};
