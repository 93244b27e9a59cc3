import { compile } from 'html-to-text';
import { reportTag, type ReportKey } from '../bounces/report-tag.js';
import { clickToken, openToken, unsubscribeToken } from '../tracking/tokens.js';
import { recipientVariables, renderHtml, renderText, type Variables } from './merge-tags.js';

/**
 * One recipient's message, ready for SMTP: merge tags filled (HTML-escaped in the HTML part),
 * tracking added, a text part, and the headers Cartero owns. Pure: everything it needs comes in
 * the input (the signing secret and PUBLIC_URL included), so it is unit-tested without I/O.
 */
export interface RenderInput {
  mailId: string;
  /** The sender's domain: Message-ID and the VERP return path live under it. */
  senderDomain: string;
  /** Base of the public tracking links, without a trailing slash. */
  publicUrl: string;
  /** Signs tracking and unsubscribe tokens (domain/tracking/secret.ts). */
  secret: string;
  /** Tags the return path and identity headers, so only a report from who saw the mail is applied. */
  reportKey: ReportKey;
  from: { email: string; name: string | null };
  to: { email: string; name: string | null; variables: Variables };
  /** Already rendered for this recipient at acceptance (mails.subject). */
  subject: string;
  /** Templates with merge tags, as accepted (messages.html / text_body). */
  html: string | null;
  text: string | null;
  /** Message-level variables (messages.variables); the recipient's win. */
  variables: Variables;
  replyTo: string | null;
  headers: Record<string, unknown>;
  attachments: unknown[];
  trackOpens: boolean;
  trackClicks: boolean;
}

export interface RenderedMail {
  /** SMTP envelope: MAIL FROM is the VERP return path, RCPT TO the one recipient. */
  envelope: { from: string; to: string };
  /** With angle brackets. */
  messageId: string;
  from: { name: string; address: string };
  to: { name: string; address: string };
  replyTo?: string;
  subject: string;
  html?: string;
  text?: string;
  /** Extra header fields in order (Cartero's, then the message's custom ones). */
  headers: Array<{ key: string; value: string }>;
  attachments: Array<{ filename: string; contentType: string; content: Buffer }>;
}

export function renderMail(input: RenderInput): RenderedMail {
  const vars = recipientVariables(input.variables, { email: input.to.email, name: input.to.name, variables: input.to.variables });
  const base = input.publicUrl.replace(/\/+$/, '');
  let html = input.html !== null ? renderHtml(input.html, vars) : undefined;
  // The text part keeps the real link targets (a reader sees where a link goes) and no pixel.
  const text = input.text !== null ? renderText(input.text, vars) : html !== undefined ? htmlToPlainText(html) : undefined;
  if (html !== undefined && input.trackClicks) {
    html = trackLinks(html, base, (url) => `${base}/t/c/${clickToken(input.secret, input.mailId, url)}`);
  }
  if (html !== undefined && input.trackOpens) {
    html = insertOpenPixel(html, `${base}/t/o/${openToken(input.secret, input.mailId)}`);
  }

  const tagged = taggedMailId(input.mailId, input.reportKey);
  const headers: Array<{ key: string; value: string }> = [
    { key: 'List-Unsubscribe', value: `<${base}/u/${unsubscribeToken(input.secret, input.mailId)}>` },
    { key: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
    { key: 'X-Cartero-Mail-Id', value: tagged },
    ...customHeaders(input.headers),
  ];

  return {
    envelope: { from: `bounce+${tagged}@${input.senderDomain}`, to: input.to.email },
    messageId: `<${tagged}@${input.senderDomain}>`,
    from: { name: input.from.name ?? '', address: input.from.email },
    to: { name: input.to.name ?? '', address: input.to.email },
    ...(input.replyTo ? { replyTo: input.replyTo } : {}),
    subject: input.subject,
    ...(html !== undefined ? { html } : {}),
    ...(text !== undefined ? { text } : {}),
    headers,
    attachments: decodeAttachments(input.attachments),
  };
}

/**
 * `MAILID.TAG`: how a mail names itself in its return path (MAIL FROM `bounce+MAILID.TAG@domain`,
 * where DSNs come back), its Message-ID and X-Cartero-Mail-Id (which feedback reports return).
 * The tag proves a report's sender saw the mail (domain/bounces/report-tag.ts).
 */
export function taggedMailId(mailId: string, key: ReportKey): string {
  return `${mailId}.${reportTag(key, mailId)}`;
}

/**
 * Header fields a message's custom headers may not set: the ones Cartero writes (identity,
 * tracking, unsubscribe, envelope) and the MIME structure nodemailer builds. The API refuses
 * them at acceptance (422); the worker also drops them, as a second wall.
 */
const PROTECTED_HEADERS = new Set([
  'message-id', 'from', 'to', 'cc', 'bcc', 'sender', 'reply-to', 'subject', 'date', 'return-path',
  'list-unsubscribe', 'list-unsubscribe-post', 'mime-version', 'content-type', 'content-transfer-encoding',
  'dkim-signature', 'received',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/; // RFC 7230 token: what nodemailer can write as a field name

/** Whether a custom header's name is a valid field name (acceptance refuses others with a 422). */
export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name);
}

export function isProtectedHeader(name: string): boolean {
  const n = name.trim().toLowerCase();
  return PROTECTED_HEADERS.has(n) || n.startsWith('list-unsubscribe') || n.startsWith('x-cartero-');
}

function customHeaders(headers: Record<string, unknown>): Array<{ key: string; value: string }> {
  const out: Array<{ key: string; value: string }> = [];
  for (const [key, raw] of Object.entries(headers ?? {})) {
    if (!isHeaderName(key) || isProtectedHeader(key)) continue;
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') continue;
    // No header injection: a line break in a value would start a new field.
    out.push({ key, value: String(raw).replace(/[\r\n]+\s*/g, ' ') });
  }
  return out;
}

// The recipients of one message share its attachments array (domain/mail/gates.ts loads the
// message once per batch), so base64 is decoded once per batch, not once per recipient.
const decoded = new WeakMap<unknown[], Array<{ filename: string; contentType: string; content: Buffer }>>();

function decodeAttachments(list: unknown[]): Array<{ filename: string; contentType: string; content: Buffer }> {
  let out = decoded.get(list);
  if (!out) {
    out = list.map(decodeAttachment);
    decoded.set(list, out);
  }
  return out;
}

function decodeAttachment(a: unknown, i: number): { filename: string; contentType: string; content: Buffer } {
  const v = (a ?? {}) as { filename?: unknown; content_type?: unknown; content?: unknown };
  if (typeof v.filename !== 'string' || typeof v.content !== 'string') throw new Error(`attachment ${i} has no filename or content`);
  return {
    filename: v.filename,
    contentType: typeof v.content_type === 'string' && v.content_type ? v.content_type : 'application/octet-stream',
    content: Buffer.from(v.content, 'base64'),
  };
}

/**
 * Rewrites the href of every `<a>` start tag that points at an http(s) URL. A regex rather than
 * an HTML parser on purpose: parsing and re-serialising would normalise the author's markup
 * (attribute quoting, entities, the conditional comments and odd HTML that email clients need
 * left alone), while this touches only the href value. The tag pattern skips `>` inside quoted
 * attribute values; the href must be a whole attribute (`data-href` is not matched) in double,
 * single or no quotes. Left alone: mailto:, tel:, `#` anchors, relative and other schemes,
 * links already tracked (under PUBLIC_URL/t/ or /u/), and merge tags that rendered to nothing.
 * The href's character references (&amp; in query strings) are decoded first, so the signed URL
 * is the one a browser would have followed.
 */
const A_TAG = /<a(?=[\s>/])(?:[^>"']|"[^"]*"|'[^']*')*>/gi;
const HREF = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i;

export function trackLinks(html: string, publicUrl: string, rewrite: (url: string) => string): string {
  const base = publicUrl.replace(/\/+$/, '');
  return html.replace(A_TAG, (tag) =>
    tag.replace(HREF, (whole, prefix: string, dq?: string, sq?: string, bare?: string) => {
      const url = decodeCharacterReferences(dq ?? sq ?? bare ?? '').trim();
      if (!/^https?:\/\/[^\s]/i.test(url)) return whole;
      if (url.startsWith(`${base}/t/`) || url.startsWith(`${base}/u/`)) return whole;
      return `${prefix}"${escapeAttribute(rewrite(url))}"`;
    }),
  );
}

/** The 1×1 open pixel, before the last </body> (or at the end when the HTML has none). */
export function insertOpenPixel(html: string, src: string): string {
  const pixel = `<img src="${escapeAttribute(src)}" width="1" height="1" alt="" style="display:none">`;
  let at = -1;
  for (const m of html.matchAll(/<\/body\s*>/gi)) at = m.index;
  return at === -1 ? html + pixel : html.slice(0, at) + pixel + html.slice(at);
}

// html-to-text (a well-kept converter: block layout, lists, tables, entities): links keep their
// URL in brackets unless the text already is the URL; images (and any pixel) are dropped.
const toText = compile({
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    { selector: 'img', format: 'skip' },
  ],
});

export function htmlToPlainText(html: string): string {
  return toText(html);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeCharacterReferences(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(cp) && cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

function escapeAttribute(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
