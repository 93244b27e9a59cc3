import { fromMailSystem, type TextFormat } from './text.js';

/**
 * Apache James's notices of a mail its mailets could not handle (NotifySender, the error
 * processor): a line that says the mail server had an error, "Error message below:" with the
 * error, then "Message details:" listing the mail, its recipients on `RCPT TO:` lines. No
 * delivery-status part, often no status: when the error names no reason, the notice's own
 * meaning stands (an error of the mail system, soft). James's remote-delivery bounce writes
 * qmail's sentences and is read by qmail.ts.
 */
export const apachejames: TextFormat = {
  name: 'ApacheJames',
  detect: (m) =>
    /^Message details:/m.test(m.text) &&
    /^[ \t]+RCPT TO:/m.test(m.text) &&
    (/^Error message below:/m.test(m.text) || /^\[BOUNCE\]/.test(m.subject) || /\.JavaMail\./.test(m.header('message-id') ?? '') || fromMailSystem(m)),
  end: [/^Content-Type: message\/rfc822/im],
  recipientAt: /^[ \t]+RCPT TO:[ \t]*<?([^\s<>]+@[^\s<>]+)>?/gm,
  reasonFirst: true,
  reason: 'systemerror',
};
