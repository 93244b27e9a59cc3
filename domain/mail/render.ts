import { escapeAttribute } from 'entities';
import { QuoteType } from 'htmlparser2';
import { reportTag, type ReportKey } from '../bounces/report-tag.js';
import { htmlTokenizer, isConditionalComment } from '../../engines/html/tokenizer.js';
import { clickToken, openToken, unsubscribeToken } from '../tracking/tokens.js';
import { recipientVariables, renderHtml, renderText, type Variables } from './merge-tags.js';
import { htmlToPlainText } from '../../engines/html/plain-text.js';
import { RenderLimitExceeded } from '../../engines/html/render-limit-exceeded.js';
import { RENDER_LIMITS, type RenderLimits } from '../../config/defaults.js';

/**
 * One recipient's message, ready for SMTP: merge tags filled (HTML-escaped in the HTML part),
 * tracking added, a text part, and the headers Cartero owns. Pure: everything it needs comes in
 * the input (the signing secret and PUBLIC_URL included), so it is unit-tested without I/O.
 */
export interface RenderInput {
  mailId: string;
  /** The sender's domain: Message-ID lives under it. */
  senderDomain: string;
  /**
   * Host of the VERP return path (MAIL FROM `bounce+<id>@` it): the sender domain's return-path
   * subdomain (RETURN_PATH_SUBDOMAIN, e.g. bounces.<domain>: domain/domains/dns-records.ts), so
   * SPF is checked on a host Cartero's records cover and aligns with From. The sender domain itself when absent.
   */
  returnPathDomain?: string;
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
  attachments: Array<{ filename: string; contentType: string; content: Buffer; cid?: string }>;
}

export function renderMail(input: RenderInput, limits: RenderLimits = RENDER_LIMITS): RenderedMail {
  const started = performance.now();
  const inTime = (step: string) => {
    const ms = performance.now() - started;
    if (ms > limits.maxMs) throw new RenderLimitExceeded(`rendering took ${Math.round(ms)} ms (${step}), over the ${limits.maxMs} ms bound`);
  };
  const inSize = (part: string, body: string) => {
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > limits.maxBodyBytes) throw new RenderLimitExceeded(`the ${part} part is ${bytes} bytes after merge tags, over the ${limits.maxBodyBytes} byte bound`);
    return body;
  };
  const vars = recipientVariables(input.variables, { email: input.to.email, name: input.to.name, variables: input.to.variables });
  const base = withoutTrailingSlashes(input.publicUrl);
  let html = input.html !== null ? inSize('html', renderHtml(input.html, vars)) : undefined;
  inTime('merge tags');
  // The text part keeps the real link targets (a reader sees where a link goes) and no pixel.
  const text = input.text !== null ? inSize('text', renderText(input.text, vars)) : html !== undefined ? htmlToPlainText(html) : undefined;
  inTime('text part');
  if (html !== undefined && input.trackClicks) {
    html = trackLinks(html, base, (url) => `${base}/t/c/${clickToken(input.secret, input.mailId, url)}`);
  }
  if (html !== undefined && input.trackOpens) {
    html = insertOpenPixel(html, `${base}/t/o/${openToken(input.secret, input.mailId)}`);
  }
  inTime('tracking');

  const tagged = taggedMailId(input.mailId, input.reportKey);
  const headers: Array<{ key: string; value: string }> = [
    { key: 'List-Unsubscribe', value: `<${base}/u/${unsubscribeToken(input.secret, input.mailId)}>` },
    { key: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
    { key: 'X-Cartero-Mail-Id', value: tagged },
    ...customHeaders(input.headers),
  ];

  return {
    envelope: { from: `bounce+${tagged}@${input.returnPathDomain ?? input.senderDomain}`, to: input.to.email },
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
function taggedMailId(mailId: string, key: ReportKey): string {
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
const decoded = new WeakMap<unknown[], Array<{ filename: string; contentType: string; content: Buffer; cid?: string }>>();

function decodeAttachments(list: unknown[]): Array<{ filename: string; contentType: string; content: Buffer; cid?: string }> {
  let out = decoded.get(list);
  if (!out) {
    out = list.map(decodeAttachment);
    decoded.set(list, out);
  }
  return out;
}

function decodeAttachment(a: unknown, i: number): { filename: string; contentType: string; content: Buffer; cid?: string } {
  const v = (a ?? {}) as { filename?: unknown; content_type?: unknown; content?: unknown; content_id?: unknown };
  if (typeof v.filename !== 'string' || typeof v.content !== 'string') throw new Error(`attachment ${i} has no filename or content`);
  return {
    filename: v.filename,
    contentType: typeof v.content_type === 'string' && v.content_type ? v.content_type : 'application/octet-stream',
    content: Buffer.from(v.content, 'base64'),
    // An inline image: the html shows it as cid:<content_id> (a part of multipart/related).
    ...(typeof v.content_id === 'string' && v.content_id ? { cid: v.content_id } : {}),
  };
}

/**
 * Rewrites the href of every `<a>` start tag that points at an http(s) URL, and nothing else:
 * parsing and re-serialising would normalise the author's markup (attribute quoting, entities,
 * the conditional comments and odd HTML that email clients need left alone), so the HTML is only
 * tokenised, by htmlparser2's Tokenizer (linear time, the HTML rules for where a tag, an attribute
 * and a quoted value end), and the href values are spliced in place; every other byte is kept.
 * The tokenizer alone, not htmlparser2's Parser: the Parser's stack of open elements costs time
 * in proportion to its depth at every tag, quadratic on deeply nested input.
 *
 * The href must be a whole attribute (`data-href` is not one), the first href of its tag (the one
 * a browser follows), in double, single or no quotes. Its character references (&amp; in query
 * strings) are decoded first, by the tokenizer's HTML decoder (the `entities` package), so the
 * signed URL is the one a browser would have followed. Left alone: mailto:, tel:, `#` anchors,
 * relative and other schemes, links already tracked (under PUBLIC_URL/t/ or /u/), merge tags that
 * rendered to nothing, and tags the input never closes. Links inside a conditional comment
 * (`<!--[if mso]>...<![endif]-->`, markup that Outlook renders) are tracked too; other comments,
 * and the raw text of <script>, <style>, <title> and <textarea>, are not markup.
 */
export function trackLinks(html: string, publicUrl: string, rewrite: (url: string) => string): string {
  const base = withoutTrailingSlashes(publicUrl);
  const out: string[] = [];
  let copied = 0;
  for (const link of findLinks(html)) {
    const url = link.url.trim();
    if (!/^https?:\/\/\S/i.test(url)) continue;
    if (url.startsWith(`${base}/t/`) || url.startsWith(`${base}/u/`)) continue;
    out.push(html.slice(copied, link.start), `"${escapeAttribute(rewrite(url))}"`);
    copied = link.end;
  }
  if (copied === 0) return html;
  out.push(html.slice(copied));
  return out.join('');
}

/** An `<a>` tag's href value as written: [start, end) covers the value with its quotes. */
interface LinkHref {
  start: number;
  end: number;
  /** The value with its character references decoded. */
  url: string;
}

/** The href of each `<a>` start tag, in document order. */
function findLinks(html: string): LinkHref[] {
  const links: LinkHref[] = [];
  scanLinks(html, 0, links, true);
  return links;
}

function scanLinks(html: string, offset: number, links: LinkHref[], intoConditionalComments: boolean): void {
  let inLink = false;
  let attribute = '';
  let valueStart = -1;
  let value = '';
  let seenHref = false;
  let href: LinkHref | undefined;
  const endStartTag = () => {
    if (href) links.push(href);
    inLink = false;
    href = undefined;
  };
  const tokenizer = htmlTokenizer(
    { decodeEntities: true },
    {
      onopentagname(start, end) {
        inLink = end - start === 1 && (html.charCodeAt(start) | 0x20) === 0x61; // a or A
        seenHref = false;
        href = undefined;
      },
      onattribname(start, end) {
        attribute = inLink ? html.slice(start, end).toLowerCase() : '';
        value = '';
        // The value (or its opening quote) starts after optional spaces, `=`, optional spaces.
        valueStart = end;
      },
      onattribdata(start, end) {
        if (attribute === 'href') value += html.slice(start, end);
      },
      onattribentity(codepoint) {
        if (attribute === 'href') value += String.fromCodePoint(codepoint);
      },
      onattribend(quote, end) {
        if (attribute !== 'href' || seenHref) return;
        seenHref = true;
        if (quote === QuoteType.NoValue) return;
        let at = html.indexOf('=', valueStart) + 1;
        while (at < end && isHtmlSpace(html.charCodeAt(at))) at++;
        href = { start: offset + at, end: offset + end, url: value };
      },
      onopentagend: endStartTag,
      onselfclosingtag: endStartTag,
      oncomment(start, end, endOffset) {
        // `<!--[if mso]> markup <![endif]-->`: Outlook renders what is inside. One level only
        // (conditional comments do not nest), so every character is tokenised at most twice.
        if (intoConditionalComments && isConditionalComment(html, start)) {
          scanLinks(html.slice(start, end - endOffset), offset + start, links, false);
        }
      },
    },
  );
  tokenizer.write(html);
  tokenizer.end();
}

/** The HTML standard's ASCII whitespace: tab, LF, FF, CR, space. */
function isHtmlSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

/** The 1×1 open pixel, before the last </body> (or at the end when the HTML has none). */
export function insertOpenPixel(html: string, src: string): string {
  const pixel = `<img src="${escapeAttribute(src)}" width="1" height="1" alt="" style="display:none">`;
  let at = -1;
  for (const m of html.matchAll(/<\/body\s*>/gi)) at = m.index;
  return at === -1 ? html + pixel : html.slice(0, at) + pixel + html.slice(at);
}

/** "https://x.example//" -> "https://x.example", without a regex that backtracks on a run of slashes. */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return url.slice(0, end);
}
