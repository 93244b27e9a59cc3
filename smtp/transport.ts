import nodemailer from 'nodemailer';
import type { RenderedMail } from '../domain/mail/render.js';
import { outcomeOfError, outcomeOfInfo, type SendOutcome } from '../domain/mail/smtp-reply.js';

/**
 * The worker's one SMTP client: a nodemailer pool (up to `maxConnections` connections reused
 * across mails, so a send costs a MAIL FROM/RCPT/DATA, not a TCP and TLS handshake).
 *
 * SMTP_URL follows nodemailer's URL conventions: `smtp://` plain with STARTTLS when the server
 * offers it, `smtps://` TLS from the start, user:pass@ for AUTH, and query options, e.g.
 * `?requireTLS=true` (refuse to send in clear) or `?ignoreTLS=true` (never STARTTLS: only for a
 * loopback server such as the mailbox simulator, which offers none anyway), `?maxConnections=10`.
 * Options in the URL win over the defaults below.
 */
export interface SmtpTransport {
  send(mail: RenderedMail): Promise<SendOutcome>;
  /** Closes idle connections at once; deliveries in progress finish first. */
  close(): void;
}

export function createSmtpTransport(smtpUrl: string, opts: { maxConnections?: number } = {}): SmtpTransport {
  const transport = nodemailer.createTransport({
    pool: true,
    url: smtpUrl,
    maxConnections: opts.maxConnections ?? 5,
    maxMessages: 1000,
    // Well under the send job's expiry (SEND_JOB_EXPIRE_SECONDS, 600 s by default, the send job in workers/send-mail.ts):
    // a stalled server becomes a deferral of this try, not an expired job.
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
    // Content comes only from the message rows; never let an attachment name a file or URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(mail) {
      try {
        const info = await transport.sendMail({
          envelope: mail.envelope,
          messageId: mail.messageId,
          from: mail.from,
          to: mail.to,
          ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
          subject: mail.subject,
          ...(mail.html !== undefined ? { html: mail.html } : {}),
          ...(mail.text !== undefined ? { text: mail.text } : {}),
          headers: mail.headers,
          attachments: mail.attachments,
        });
        return outcomeOfInfo(info);
      } catch (err) {
        return outcomeOfError(err);
      }
    },
    close() {
      transport.close();
    },
  };
}
