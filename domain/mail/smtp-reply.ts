/**
 * What an SMTP reply (or its absence) means for a mail. The basic code decides the family
 * (2xx sent, 4xx deferred, 5xx bounced); for a 5xx the RFC 3463 enhanced status code decides
 * whether the address itself is bad (hard: never try it again) or this message failed for a
 * reason that may pass later (soft).
 */
export interface SmtpReply {
  /** The basic reply code (250, 451, 550...), undefined when no reply came (connection error). */
  code?: number;
  /** The enhanced status code (5.1.1), when the server gave one of the same class. */
  enhanced?: string;
  /** The reply as received (or the error message when no reply came), for the mail's logs. */
  text: string;
}

export type SendOutcome =
  | { kind: 'sent'; reply: SmtpReply }
  | { kind: 'deferred'; reply: SmtpReply }
  | { kind: 'bounced'; bounceClass: 'hard' | 'soft'; reply: SmtpReply };

const REPLY = /^(\d{3})[ -](?:([245])\.(\d{1,3})\.(\d{1,3})\b)?/;

/** Parses "550 5.1.1 <a@b>: User unknown" (multi-line replies: the first line decides). */
export function parseSmtpReply(response: string, code?: number): SmtpReply {
  const text = response.trim();
  const m = REPLY.exec(text);
  const basic = code ?? (m ? Number(m[1]) : undefined);
  // RFC 3463: the enhanced code's class must match the basic code's; a mismatch is ignored.
  const enhanced = m && m[2] && basic !== undefined && String(basic)[0] === m[2] ? `${m[2]}.${Number(m[3])}.${Number(m[4])}` : undefined;
  return { ...(basic !== undefined ? { code: basic } : {}), ...(enhanced ? { enhanced } : {}), text };
}

/**
 * Hard (the address is bad): enhanced 5.1.x (bad mailbox, bad domain, bad syntax, moved), 5.0.0
 * and 5.5.x (addressing/protocol errors servers give for unknown users). Everything else under
 * 5xx is soft: 5.2.x mailbox full or disabled, 5.3.x system, 5.4.x routing, 5.7.x policy.
 * Without an enhanced code: 550 (mailbox unavailable), 551 (user not local) and 553 (mailbox
 * name not allowed) are hard, the rest (552 storage, 554 transaction failed) soft.
 */
export function bounceClassOf(code: number, enhanced: string | undefined): 'hard' | 'soft' {
  if (enhanced) {
    const [, subject] = enhanced.split('.');
    if (subject === '1' || subject === '5' || enhanced === '5.0.0') return 'hard';
    return 'soft';
  }
  return code === 550 || code === 551 || code === 553 ? 'hard' : 'soft';
}

export function classifyReply(reply: SmtpReply): SendOutcome {
  const code = reply.code;
  if (code !== undefined && code >= 200 && code < 300) return { kind: 'sent', reply };
  if (code !== undefined && code >= 500 && code < 600) return { kind: 'bounced', bounceClass: bounceClassOf(code, reply.enhanced), reply };
  // 4xx, and no reply at all: try again later.
  return { kind: 'deferred', reply };
}

/** The outcome of nodemailer's resolved sendMail (info.response is the final reply line). */
export function outcomeOfInfo(info: { response?: unknown }): SendOutcome {
  const response = typeof info.response === 'string' ? info.response : '250';
  return classifyReply(parseSmtpReply(response));
}

/**
 * The outcome of nodemailer's rejected sendMail. Errors with a server reply (EENVELOPE at MAIL
 * FROM/RCPT TO, EMESSAGE after DATA, EAUTH) carry `response` and `responseCode`; connection
 * errors, timeouts and TLS failures carry none and are deferred, like a 4xx.
 */
export function outcomeOfError(err: unknown): SendOutcome {
  const e = (err ?? {}) as { response?: unknown; responseCode?: unknown; code?: unknown; message?: unknown };
  const code = typeof e.responseCode === 'number' && e.responseCode >= 400 && e.responseCode < 600 ? e.responseCode : undefined;
  if (code !== undefined) {
    const response = typeof e.response === 'string' && e.response.trim() ? e.response : String(code);
    return classifyReply(parseSmtpReply(response, code));
  }
  const label = typeof e.code === 'string' ? `${e.code}: ` : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  return { kind: 'deferred', reply: { text: `${label}${message}` } };
}
