import { PassThrough, type Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import type { RenderedMail } from '../domain/mail/render.js';
import { outcomeOfError, outcomeOfInfo, type SendOutcome } from '../engines/bounces/smtp-reply.js';
import type { SigningKey } from '../domain/domains/dkim-keys.js';
import { dkimSign } from './dkim-sign.js';
import { SMTP_TIMEOUT_DEFAULTS, type SmtpTimeouts } from '../config/config.js';

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
  /** With `dkim`, the message is DKIM-signed (smtp/dkim-sign.ts) with the sender domain's key. */
  send(mail: RenderedMail, dkim?: SigningKey): Promise<SendOutcome>;
  /** Closes idle connections at once; deliveries in progress finish first. */
  close(): void;
}

/**
 * The header fields the signature covers: nodemailer's default DKIM list (RFC 6376 5.4's, From,
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

/** Where a message's signing key rides along in nodemailer's message data to the plugin below. */
const DKIM_KEY = 'carteroSigningKey';

/**
 * nodemailer's process function: reads the composed message, gives it out signed. Plain 'data'
 * events and one PassThrough: async iteration with Readable.from measured 0.1 ms more CPU per
 * message, a third of what signing costs.
 */
function signed(input: Readable, key: SigningKey): Readable {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  input.on('data', (chunk: Buffer) => chunks.push(chunk));
  input.once('error', (err) => output.destroy(err));
  input.once('end', () => {
    dkimSign(Buffer.concat(chunks), key, DKIM_SIGNED_HEADERS).then(
      (message) => output.end(message),
      (err: Error) => output.destroy(err),
    );
  });
  return output;
}

export function createSmtpTransport(smtpUrl: string, opts: { maxConnections?: number; /** SMTP_CONNECTION_TIMEOUT_MS, SMTP_GREETING_TIMEOUT_MS, SMTP_SOCKET_TIMEOUT_MS. */ timeouts?: SmtpTimeouts } = {}): SmtpTransport {
  const timeouts = opts.timeouts ?? SMTP_TIMEOUT_DEFAULTS;
  const transport = nodemailer.createTransport({
    pool: true,
    url: smtpUrl,
    maxConnections: opts.maxConnections ?? 5,
    maxMessages: 1000,
    // Well under the send job's expiry (SEND_JOB_EXPIRE_SECONDS, 600 s by default, the send job in workers/jobs/send-mail/):
    // a stalled server (no connection, no greeting, silence mid-session) becomes a deferral of
    // this try, not an expired job.
    connectionTimeout: timeouts.connectionMs,
    greetingTimeout: timeouts.greetingMs,
    socketTimeout: timeouts.socketMs,
    // Content comes only from the message rows; never let an attachment name a file or URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  // Signing hooks in where nodemailer's own `dkim` option does, as a process function over the
  // composed message stream (the message is composed once); see smtp/dkim-sign.ts for why the
  // signer is ours.
  transport.use('stream', (message, done) => {
    const key = (message.data as { [DKIM_KEY]?: SigningKey })[DKIM_KEY];
    if (key) message.message.processFunc((input) => signed(input, key));
    done();
  });
  return {
    async send(mail, dkim) {
      try {
        const options = {
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
          ...(dkim ? { [DKIM_KEY]: dkim } : {}),
        };
        return outcomeOfInfo(await transport.sendMail(options));
      } catch (err) {
        return outcomeOfError(err, mail.envelope.to);
      }
    },
    close() {
      transport.close();
    },
  };
}
