import type { KeyObject } from 'node:crypto';
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
  /** With `dkim`, the message is DKIM-signed (nodemailer's signer) with the sender domain's key. */
  send(mail: RenderedMail, dkim?: DkimSigner): Promise<SendOutcome>;
  /** Closes idle connections at once; deliveries in progress finish first. */
  close(): void;
}

/** A domain's signing key (domain/domains/dkim-keys.ts signingKeys). */
export interface DkimSigner {
  domain: string;
  selector: string;
  privateKey: KeyObject;
}

/**
 * The header fields the signature covers: nodemailer's default list (RFC 6376 5.4's, From,
 * Subject, Date, Message-ID, To, MIME structure, List-*), plus List-Unsubscribe-Post (RFC 8058
 * requires it signed for one-click unsubscribe) and X-Cartero-Mail-Id (the identity feedback
 * loops return). All are final when the mail is rendered: tracking rewrites links and adds the
 * pixel in the body before signing, so the body hash covers the tracked body. Fields a relay or
 * mailbox adds on the way (Received, Return-Path, the simulator's X-Simulator-Rcpt-To) are not
 * in the list, so adding them breaks nothing.
 */
export const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:Content-ID:' +
  'Content-Description:In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:' +
  'List-Post:List-Owner:List-Archive:X-Cartero-Mail-Id';

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
    async send(mail, dkim) {
      try {
        const info = await transport.sendMail({
          ...(dkim ? { dkim: { domainName: dkim.domain, keySelector: dkim.selector, privateKey: dkim.privateKey, headerFieldNames: DKIM_SIGNED_HEADERS } } : {}),
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
