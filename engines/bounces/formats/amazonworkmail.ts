import type { TextFormat } from './text.js';

/**
 * Amazon WorkMail (and SES's own MAILER-DAEMON): "An error occurred while trying to deliver the
 * mail to the following recipients:", then a "Technical report:" of RFC 3464 fields written as
 * plain text (read by rfc3464.ts's text fallback, which this family's marker selects).
 */
export const amazonworkmail: TextFormat = {
  name: 'AmazonWorkMail',
  detect: (m) => /An error occurred while trying to deliver the mail to the following recipients/i.test(m.text),
  start: /Technical report:/i,
  end: [],
};
