import type { TextFormat } from './text.js';

/**
 * Exim, and the providers that run it with its texts (GMX, 1&1, FrancePTT...): "This message was
 * created automatically by mail delivery software", the failed addresses indented, each followed
 * by the remote server's reply; the copy of the message after a dashed line. Its delay warnings
 * ("Warning: message ... delayed") say the message "has not yet been delivered".
 */
export const exim: TextFormat = {
  name: 'Exim',
  detect: (m) =>
    /This message was created automatically by mail delivery software|A message that you sent could not be delivered to one or more of|recipient addresses that were\s+incorrectly constructed/i.test(m.text) || !!m.header('x-failed-recipients'),
  start: /The following address(?:\(es\)|es)?\s+failed:|could not be delivered to one or more of its\s+recipients\.|incorrectly constructed:/i,
  startSkipsLine: true,
  end: [/^-{3,} ?This is a copy of (?:the|your) message/im, /^-{3} The header of the original message is following/im, /^-{3,} ?The body of the message is/im, /^-{3,} Original message/im],
  delayed: /has not yet been delivered|^Warning: message \S+ delayed|Mail delivery delayed|No action is required on your part/i,
  // Exim's own verdicts (router and transport messages), used when no remote server's reply to a
  // named command is quoted: then the remote server's words decide.
  statesWithoutCommand: true,
  states: [
    ['userunknown', /^[ \t]*user not found|unknown user|no such user/im],
    ['hostunknown', /all host address lookups failed permanently|all relevant MX records point to non-existent hosts|unrout(?:e)?able address/i],
    ['notaccept', /an MX or SRV record indicated no SMTP service|no host found for existing SMTP connection/i],
    ['mailboxfull', /mailbox is full|error: quota exceed/i],
    ['mailererror', /pipe to \|/i],
    ['systemerror', /delivery to (?:file|pipe) forbidden|local delivery failed|LMTP error after/i],
    ['contenterror', /too many "received" headers/i],
    ['expired', /retry timeout exceeded|retry time not reached|all hosts have been failing|delay reason:|\bfrozen\b/i],
  ],
};
