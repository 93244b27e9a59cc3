/**
 * An RFC 3464 delivery status notification as reporting MTAs write it, for the bounce tests
 * that need a whole report around a few fields: a human part, the delivery-status part (its
 * per-message fields, a blank line, the per-recipient fields) and the returned headers.
 */
export function dsnReport(opts: {
  from: string;
  subject: string;
  /** The per-message fields (Reporting-MTA: ...). */
  perMessage: string[];
  /** The per-recipient fields (Final-Recipient, Action, Status, Diagnostic-Code...). */
  fields: string[];
  human: string;
  /** The returned message's To. */
  originalTo: string;
}): Buffer {
  return Buffer.from(
    [
      `From: ${opts.from}`,
      'To: bounce+x@send.example',
      `Subject: ${opts.subject}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      opts.human,
      '',
      '--b1',
      'Content-Type: message/delivery-status',
      '',
      ...opts.perMessage,
      '',
      ...opts.fields,
      '',
      '--b1',
      'Content-Type: text/rfc822-headers',
      '',
      'From: News <news@send.example>',
      `To: ${opts.originalTo}`,
      'Subject: Hello',
      '',
      '--b1--',
      '',
    ].join('\r\n'),
  );
}
