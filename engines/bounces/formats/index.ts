import type { ParsedMail } from 'mailparser';
import { readArf, type FeedbackReport } from '../arf.js';
import type { DeliveryStatusReport } from '../dsn.js';
import { parseReportMessage } from '../report-message.js';
import { amazonworkmail } from './amazonworkmail.js';
import { detectSes, readSes } from './amazonses.js';
import { apachejames } from './apachejames.js';
import { au } from './au.js';
import { isAutoReply } from './auto-reply.js';
import { domino } from './domino.js';
import { dragonfly } from './dragonfly.js';
import { exchange2003 } from './exchange2003.js';
import { exim } from './exim.js';
import { fml } from './fml.js';
import { gmail } from './gmail.js';
import { googlegroups } from './googlegroups.js';
import { imail } from './imail.js';
import { interscan } from './interscan.js';
import { mailru } from './mailru.js';
import { mfilter } from './mfilter.js';
import { opensmtpd } from './opensmtpd.js';
import { qmail } from './qmail.js';
import { readRfc3464 } from './rfc3464.js';
import { fromMailSystem, readableText, readTextBounce, type InboundText, type TextFormat } from './text.js';
import { v5sendmail } from './v5sendmail.js';
import { readUnsubscribeRequest } from './unsubscribe-request.js';
import { generic, saysFailure } from './x-generic.js';
import { yahoo } from './yahoo.js';
import { zoho } from './zoho.js';

/**
 * What an inbound message is, whatever its format: a bounce (with one block per recipient, in
 * the shape of an RFC 3464 report whatever the format it came in), a complaint, or something that
 * changes nothing (an auto-reply, a delivery notification). The listener (smtp/inbound.ts)
 * decides what each means for the mails it names.
 */
export type DecodedReport =
  | { kind: 'bounce'; format: string; report: DeliveryStatusReport }
  | { kind: 'complaint'; format: string; report: FeedbackReport }
  | { kind: 'nothing'; format: string; why: string }
  | { kind: 'unknown' };

/**
 * Text families, most specific first: a family whose markers are a subset of another's comes
 * before it (Mail.Ru and Zoho write Exim's sentences; Google Groups comes from Gmail's daemon).
 * fml and Apache James are recognised by their own headers and layout, which no MTA's text
 * bounce has, and quote other systems' words (a list's notice may quote an MTA's error), so they come first.
 */
export const TEXT_FORMATS: readonly TextFormat[] = [
  fml, apachejames, amazonworkmail, qmail, yahoo, googlegroups, gmail, dragonfly, zoho, mailru, exim, exchange2003, imail, v5sendmail, opensmtpd, domino, au,
  interscan, mfilter,
];

/** Nested forwarded reports are followed this deep. */
const MAX_DEPTH = 2;

/**
 * When mailparser finds no readable part (a damaged MIME structure: a boundary parameter on an
 * unfolded line, a missing closing delimiter), the raw body after the header section, without
 * its MIME delimiter lines and part headers, stands for the text.
 */
function rawBodyText(raw: Buffer | string | undefined): string {
  if (raw === undefined) return '';
  const s = (typeof raw === 'string' ? raw : raw.toString('utf8')).replace(/\r\n?/g, '\n');
  const start = s.indexOf('\n\n');
  if (start === -1) return '';
  return s
    .slice(start + 2)
    .split('\n')
    .filter((line) => !/^--\S+$/.test(line) && !/^(?:Content-(?:Type|Transfer-Encoding|Disposition)|boundary=)/i.test(line))
    .join('\n');
}

export function inboundText(parsed: ParsedMail, raw?: Buffer | string): InboundText {
  const lines = new Map<string, string>();
  for (const h of parsed.headerLines ?? []) {
    if (!lines.has(h.key)) lines.set(h.key, h.line.slice(h.line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim());
  }
  return {
    parsed,
    from: (parsed.from?.value[0]?.address ?? '').toLowerCase(),
    subject: parsed.subject ?? '',
    text: readableText(parsed) || (parsed.attachments.length ? '' : rawBodyText(raw).replace(/\u0000/g, '')),
    header: (name) => lines.get(name.toLowerCase()),
  };
}

/**
 * A text bounce names no Reporting-MTA: the domain of its author (MAILER-DAEMON@yahoo.com) stands
 * for the system that wrote it, so a provider's own texts are read by its rules (providers.ts).
 */
function reporter(m: InboundText): { reportingMta?: string } {
  const domain = m.from.split('@')[1];
  return domain ? { reportingMta: domain } : {};
}

export async function decodeInbound(raw: Buffer | string, depth = 0): Promise<DecodedReport> {
  return decodeParsed(await parseReportMessage(raw), raw, depth);
}

/** `raw`: the message as received, read as text when its MIME structure is too damaged for mailparser. */
export async function decodeParsed(parsed: ParsedMail, raw?: Buffer | string, depth = 0): Promise<DecodedReport> {
  const arf = readArf(parsed);
  if (arf) return { kind: 'complaint', format: 'ARF', report: arf };
  // A read receipt (RFC 8098 message disposition notification): the mail was read, nothing failed.
  if (parsed.attachments.some((a) => /^message\/(global-)?disposition-notification$/i.test(a.contentType))) {
    return { kind: 'nothing', format: 'MDN', why: 'a read receipt (message disposition notification)' };
  }
  const m = inboundText(parsed, raw);
  const dsn = readRfc3464(m);
  if (dsn && dsn.recipients.length) return { kind: 'bounce', format: 'RFC3464', report: dsn };
  if (detectSes(m)) {
    const ses = readSes(m);
    if (ses?.kind === 'bounce') return { kind: 'bounce', format: 'AmazonSES', report: ses.report };
    if (ses?.kind === 'complaint') return { kind: 'complaint', format: 'AmazonSES', report: ses.report };
    if (ses?.kind === 'delivery') return { kind: 'nothing', format: 'AmazonSES', why: 'a delivery notification' };
  }
  for (const format of TEXT_FORMATS) {
    if (!format.detect(m)) continue;
    if (format === amazonworkmail) {
      const report = readRfc3464(m, true);
      if (report) return { kind: 'bounce', format: format.name, report };
      continue;
    }
    return { kind: 'bounce', format: format.name, report: { ...readTextBounce(m, format), ...reporter(m) } };
  }
  // A DSN whose MIME structure is damaged: its fields in the text.
  const damaged = readRfc3464(m, true);
  if (damaged && damaged.recipients.length) return { kind: 'bounce', format: 'RFC3464 (damaged MIME, read as text)', report: damaged };
  const mailSystem = fromMailSystem(m);
  // A report inside an attached message: a bounce forwarded by a person, or by a mail system
  // that wraps the DSN it received (a gateway's "Returned mail" around the real report).
  if (depth < MAX_DEPTH) {
    for (const a of parsed.attachments) {
      if (!/^message\/(rfc822|global)$/i.test(a.contentType)) continue;
      const inner = await decodeInbound(a.content, depth + 1);
      if (inner.kind === 'bounce' || inner.kind === 'complaint') return { ...inner, format: `${inner.format} (forwarded)` };
    }
  }
  const unsubscribe = mailSystem ? undefined : readUnsubscribeRequest(m);
  if (unsubscribe) return { kind: 'complaint', format: 'unsubscribe request', report: unsubscribe };
  if (isAutoReply(m) && !mailSystem) return { kind: 'nothing', format: 'auto-reply', why: 'an auto-reply (RFC 3834, vacation)' };
  if (generic.detect(m)) {
    if (!saysFailure(m.text, m.subject)) return { kind: 'nothing', format: generic.name, why: 'a mail system notice that reports no failure' };
    return { kind: 'bounce', format: generic.name, report: { ...readTextBounce(m, generic), ...reporter(m) } };
  }
  return { kind: 'unknown' };
}
