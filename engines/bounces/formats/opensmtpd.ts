import type { TextFormat } from './text.js';

/** OpenSMTPD: "This is the MAILER-DAEMON, please DO NOT REPLY", `address: reason` lines, "Below is a copy of the original message:". */
export const opensmtpd: TextFormat = {
  name: 'OpenSMTPD',
  detect: (m) => /This is the MAILER-DAEMON, please DO NOT REPLY to this e-?mail/i.test(m.text),
  start: /(?:following\s+list of recipients:|following recipients?:)/i,
  end: [/^[ \t]*Below is a copy of the original message:/im],
  delayed: /this is only a temporary failure report|message is delayed for more than/i,
};
