import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import type { SendRequest } from '../../domain/mail/send-request.js';
import { isHeaderName, isProtectedHeader } from '../../domain/mail/render.js';
import type { Reply } from './accept.js';

/**
 * A submitted message as the send request POST /v1/mails/send would take (docs/sending.md, Send
 * over SMTP): the `From:` address is `from`, each envelope recipient (RCPT TO) one entry of `to`
 * (named as the To or Cc header names it; a Bcc header is never carried), Subject, the text and
 * html parts, attachments and inline images (an attachment with a Content-ID) as sent, Reply-To,
 * and the message's other header fields as custom headers (those the service writes itself, the
 * MIME structure and trace fields excepted). The send options are X-Cartero-* header fields,
 * read here and removed: a bad value is a `550 5.6.0` naming the field.
 */

/** The send options as header fields; any other X-Cartero-* field is refused (a typo is not silent). */
export const OPTION_HEADERS = {
  'x-cartero-custom-msg-id': 'custom_msg_id',
  'x-cartero-group': 'custom_group_code',
  'x-cartero-track-opens': 'track_opens',
  'x-cartero-track-clicks': 'track_clicks',
  'x-cartero-purposes': 'purpose_ids',
  'x-cartero-template-id': 'template_id',
  'x-cartero-variables': 'variables',
  'x-cartero-test-mode': 'test_mode',
} as const satisfies Record<string, keyof SendRequest>;

/** Header fields of the message not carried as custom headers: MIME structure, trace and authentication results. */
const NOT_CARRIED = /^(?:content-|arc-|received|authentication-results$|x-original-to$|delivered-to$)/i;

/** What a submitted message becomes: the request, or the reply that refuses it. */
export type Submitted = { request: SendRequest; messageId: string | undefined } | { refusal: Reply };

const badField = (field: string, why: string): { refusal: Reply } => ({ refusal: { code: 550, text: `5.6.0 ${field}: ${why}` } });

const names = (list: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(list) ? list : list ? [list] : []).flatMap((a) => a.value);

function headerName(line: string): string {
  return line.slice(0, line.indexOf(':')).trim();
}

/** An unfolded header value as sent (encoded words left as they are). */
function headerValue(line: string): string {
  return line.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
}

function flag(field: string, value: string): boolean | { refusal: Reply } {
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === 'yes' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === '0') return false;
  return badField(field, 'must be true or false');
}

function integer(value: string): number | undefined {
  const v = value.trim();
  return /^[1-9]\d{0,9}$/.test(v) ? Number(v) : undefined;
}

/** The send options the X-Cartero-* fields give, or the refusal of the first bad one. */
function options(headerLines: ParsedMail['headerLines']): Partial<SendRequest> | { refusal: Reply } {
  const out: Record<string, unknown> = {};
  for (const { line } of headerLines) {
    const field = headerName(line);
    const key = field.toLowerCase();
    if (!key.startsWith('x-cartero-')) continue;
    if (!Object.hasOwn(OPTION_HEADERS, key)) return badField(field, `not a header Cartero knows (${Object.keys(OPTION_HEADERS).join(', ')})`);
    const option = OPTION_HEADERS[key as keyof typeof OPTION_HEADERS];
    if (option in out) return badField(field, 'given more than once');
    const value = headerValue(line);
    switch (option) {
      case 'track_opens':
      case 'track_clicks':
      case 'test_mode': {
        const v = flag(field, value);
        if (typeof v !== 'boolean') return v;
        out[option] = v;
        break;
      }
      case 'template_id': {
        const id = integer(value);
        if (id === undefined) return badField(field, 'must be a template id (a whole number)');
        out[option] = id;
        break;
      }
      case 'purpose_ids': {
        const ids = value.split(',').map(integer);
        if (!ids.length || ids.some((id) => id === undefined)) return badField(field, 'must be purpose ids separated by commas');
        out[option] = ids;
        break;
      }
      case 'variables': {
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          return badField(field, 'must be a JSON object');
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return badField(field, 'must be a JSON object');
        out[option] = parsed;
        break;
      }
      default:
        out[option] = value;
    }
  }
  return out as Partial<SendRequest>;
}

/** The message's other header fields that travel with each mail (custom headers of the send). */
function customHeaders(headerLines: ParsedMail['headerLines']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { line } of headerLines) {
    const field = headerName(line);
    if (!isHeaderName(field) || isProtectedHeader(field) || NOT_CARRIED.test(field)) continue;
    const value = headerValue(line);
    // A field the send request could not hold (over 998 characters, a repeated field) is left out.
    if (value.length > 998 || Object.keys(out).some((k) => k.toLowerCase() === field.toLowerCase())) continue;
    if (Object.keys(out).length >= 50) break;
    out[field] = value;
  }
  return out;
}

/**
 * The send request of one submitted message and its envelope recipients. The schema's own checks
 * (sizes, counts, formats) and the acceptance's run after this, in acceptance (./accept.ts).
 */
export async function readSubmission(raw: Buffer, recipients: string[]): Promise<Submitted> {
  let parsed: ParsedMail;
  try {
    // As sent: cid: links kept (the inline parts travel with their Content-ID), no text made from html or html from text.
    parsed = await simpleParser(raw, { keepCidLinks: true, skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  } catch {
    return { refusal: { code: 550, text: '5.6.0 The message could not be parsed' } };
  }
  const from = names(parsed.from);
  if (from.length !== 1 || !from[0]!.address) return badField('From', 'exactly one address is required');
  const opts = options(parsed.headerLines);
  if ('refusal' in opts) return opts as { refusal: Reply };

  // Display names from To and Cc; a Bcc header's names are not read (it is never carried).
  const named = new Map<string, string>();
  for (const a of [...names(parsed.to), ...names(parsed.cc)]) if (a.address && a.name) named.set(a.address.toLowerCase(), a.name);
  // An address given twice in the envelope is one recipient (one mail), as an MTA delivers it once.
  const unique = [...new Map(recipients.map((r) => [r.toLowerCase(), r])).values()];
  const to = unique.map((email) => {
    const name = named.get(email.toLowerCase());
    return name ? { email, name: name.slice(0, 200) } : { email };
  });

  const replyTo = names(parsed.replyTo)[0]?.address;
  const templated = opts.template_id !== undefined;
  const request: SendRequest = {
    from: from[0]!.address,
    to,
    ...(parsed.subject ? { subject: parsed.subject } : {}),
    // With a template, the template's content is sent and the message's body is not read.
    ...(!templated && typeof parsed.html === 'string' ? { html: parsed.html } : {}),
    ...(!templated && parsed.text !== undefined && (parsed.text !== '' || typeof parsed.html !== 'string') ? { text: parsed.text } : {}),
    ...(replyTo ? { reply_to: replyTo } : {}),
    ...opts,
  };
  const headers = customHeaders(parsed.headerLines);
  if (Object.keys(headers).length) request.headers = headers;
  if (parsed.attachments.length) {
    request.attachments = parsed.attachments.map((a, i) => ({
      filename: a.filename || `attachment-${i + 1}`,
      content_type: a.contentType || 'application/octet-stream',
      content: a.content.toString('base64'),
      ...(a.cid ? { content_id: a.cid } : {}),
    }));
  }
  return { request, messageId: parsed.messageId };
}
