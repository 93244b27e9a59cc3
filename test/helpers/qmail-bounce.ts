/**
 * A qmail "failure notice" (plain text, no DSN part) for one recipient: the classifier test reads
 * it forwarded, the reasons test sends it to a VERP address; one text so both read the same bounce.
 */
export function qmailBounce(recipient: string, headers: string[] = []): string {
  return [
    'From: MAILER-DAEMON@mx.example.org',
    ...headers,
    'Subject: failure notice',
    '',
    'Hi. This is the qmail-send program at mx.example.org.',
    "I'm afraid I wasn't able to deliver your message to the following addresses.",
    "This is a permanent error; I've given up. Sorry it didn't work out.",
    '',
    `<${recipient}>:`,
    '192.0.2.1 does not like recipient.',
    `Remote host said: 550 5.1.1 <${recipient}>: Recipient address rejected: User unknown`,
    'Giving up on 192.0.2.1.',
    '',
    '--- Below this line is a copy of the message.',
    '',
    'Subject: Hello',
    '',
  ].join('\r\n');
}
