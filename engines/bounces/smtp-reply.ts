import type { BounceReason } from './reason-names.js';
import type { ReportHosts } from './providers.js';
import { classifyFailure, type SmtpCommand } from './reason.js';

/**
 * What an SMTP reply (or its absence) means for a mail. The basic code decides the family
 * (2xx sent, 4xx deferred, 5xx bounced); for a 5xx the bounce classifier shared with the inbound
 * listener (engines/bounces/reason.ts) derives the reason from the enhanced status, the code and
 * the reply's words, and the reason decides whether the address itself is dead (hard: never try
 * it again) or this message failed for a reason that may pass later (soft).
 */
export interface SmtpReply {
  /** The basic reply code (250, 451, 550...), undefined when no reply came (connection error). */
  code?: number;
  /** The enhanced status code (5.1.1), when the server gave one of the same class. */
  enhanced?: string;
  /** The reply as received (or the error message when no reply came), for the mail's logs. */
  text: string;
  /** The command the reply answered (nodemailer's err.command), when known. */
  command?: SmtpCommand;
}

export type SendOutcome =
  | { kind: 'sent'; reply: SmtpReply }
  | { kind: 'deferred'; reply: SmtpReply }
  | { kind: 'bounced'; bounceClass: 'hard' | 'soft'; reason: BounceReason; reply: SmtpReply };

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

/** `hosts`: the mail's recipient, so a large provider's own replies are read by its rules (providers.ts). */
export function classifyReply(reply: SmtpReply, hosts?: ReportHosts): SendOutcome {
  const code = reply.code;
  if (code !== undefined && code >= 200 && code < 300) return { kind: 'sent', reply };
  if (code !== undefined && code >= 500 && code < 600) {
    const { reason, bounceClass } = classifyFailure({ code, status: reply.enhanced, diagnostic: reply.text, command: reply.command, ...(hosts ? { hosts } : {}) });
    return { kind: 'bounced', bounceClass, reason, reply };
  }
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
export function outcomeOfError(err: unknown, recipient?: string): SendOutcome {
  const e = (err ?? {}) as { response?: unknown; responseCode?: unknown; code?: unknown; message?: unknown; command?: unknown };
  const code = typeof e.responseCode === 'number' && e.responseCode >= 400 && e.responseCode < 600 ? e.responseCode : undefined;
  if (code !== undefined) {
    const response = typeof e.response === 'string' && e.response.trim() ? e.response : String(code);
    const command = commandOf(e.command);
    return classifyReply({ ...parseSmtpReply(response, code), ...(command ? { command } : {}) }, recipient ? { recipient } : undefined);
  }
  const label = typeof e.code === 'string' ? `${e.code}: ` : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  return { kind: 'deferred', reply: { text: `${label}${message}` } };
}

/** nodemailer's err.command ("RCPT TO", "DATA", "MAIL FROM"...) as the classifier's command. */
function commandOf(command: unknown): SmtpCommand | undefined {
  if (typeof command !== 'string') return undefined;
  const c = command.toUpperCase();
  if (c.startsWith('MAIL')) return 'MAIL';
  if (c.startsWith('RCPT')) return 'RCPT';
  if (c.startsWith('DATA') || c === 'MESSAGE') return 'DATA';
  if (c.startsWith('EHLO') || c.startsWith('HELO')) return 'HELO';
  if (c === 'CONN' || c === 'GREETING') return 'CONN';
  return undefined;
}
