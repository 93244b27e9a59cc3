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
};
