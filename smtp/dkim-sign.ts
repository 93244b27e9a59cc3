import { createHash, sign } from 'node:crypto';
import { promisify } from 'node:util';
import type { SigningKey } from '../domain/domains/dkim-keys.js';

/**
 * DKIM signing (RFC 6376, rsa-sha256, relaxed/relaxed) of a message nodemailer composed; the
 * send worker's transport hooks it into nodemailer's pipeline (smtp/transport.ts).
 *
 * Why not nodemailer's `dkim` option, which the worker used first: it signs inside nodemailer's
 * stream pipeline (a header parser and a body-hash transform, then the cached chunks written one
 * by one) and computes the RSA signature synchronously on the worker's event loop. Here the whole
 * message is in hand, the hashing is a few linear string passes, and the RSA signature (about
 * 0.2 ms of CPU, the one real cost) runs on libuv's thread pool, so the event loop that feeds SMTP
 * and Postgres goes on meanwhile. What each costs: docs/performance.md (issue 17). Checked against
 * mailauth and nodemailer's signer in test/dkim-sign.test.ts, end to end in test/domains-dkim.test.ts.
 */
const rsaSign = promisify(sign);

/**
 * The message as it goes on the wire, with a DKIM-Signature field on top. Line breaks are made
 * CRLF first: nodemailer's SMTP data stream turns bare CR and LF into CRLF, and the hashes must
 * cover the bytes the receiver sees.
 */
export async function dkimSign(message: Buffer, key: SigningKey, fieldNames: string): Promise<Buffer> {
  // latin1 maps each byte to one char and back, so 8-bit content survives untouched.
  let text = message.toString('latin1').replace(/\r\n|\r|\n/g, '\r\n');
  // A message of header fields only gets the empty line that ends them (its body is empty).
  if (!text.includes('\r\n\r\n')) text += text.endsWith('\r\n') ? '\r\n' : '\r\n\r\n';
  const split = text.indexOf('\r\n\r\n');
  const header = text.slice(0, split + 2);
  const body = text.slice(split + 4);
  const bodyHash = createHash('sha256').update(relaxedBody(body), 'latin1').digest('base64');

  const { canonical, signed } = relaxedHeaders(header, fieldNames);
  const field =
    foldTags(['v=1', 'a=rsa-sha256', 'c=relaxed/relaxed', `d=${key.domain}`, 'q=dns/txt', `s=${key.selector}`, `bh=${bodyHash}`, `h=${signed}`]) + ';\r\n b=';
  // The signature covers the signed fields, then this field with an empty b=, without its CRLF.
  const data = canonical + 'dkim-signature:' + relaxedValue(field.slice(field.indexOf(':') + 1));
  const signature = (await rsaSign('sha256', Buffer.from(data, 'latin1'), key.privateKey)).toString('base64');
  return Buffer.from(field + foldBase64(signature) + '\r\n' + text, 'latin1');
}

/**
 * RFC 6376 3.4.4: runs of SP/HTAB become one SP, whitespace at line ends goes, empty lines at
 * the end go, and a non-empty body ends with one CRLF. Written as single linear passes (no
 * pattern anchored at the end that could backtrack over a long run).
 */
export function relaxedBody(body: string): string {
  let s = body.replace(/[ \t]+/g, ' ').replaceAll(' \r\n', '\r\n');
  if (s.endsWith(' ')) s = s.slice(0, -1);
  let end = s.length;
  while (end >= 2 && s.charCodeAt(end - 1) === 10 && s.charCodeAt(end - 2) === 13) end -= 2;
  s = s.slice(0, end);
  return s.length ? s + '\r\n' : '';
}

/** RFC 6376 3.4.2: a field as `name:value`, the name lower-cased, the value unfolded and its whitespace collapsed. */
function relaxedValue(value: string): string {
  return value.replaceAll('\r\n', '').replace(/[ \t]+/g, ' ').replace(/^ | $/g, '');
}

/**
 * The canonical form of the listed fields present in the header, and their names for h=. Each
 * name is signed once, its last occurrence (RFC 6376 5.4.2: fields are taken bottom-up).
 */
export function relaxedHeaders(header: string, fieldNames: string): { canonical: string; signed: string } {
  const last = new Map<string, string>();
  for (const line of header.split(/\r\n(?![ \t])/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last.set(line.slice(0, colon).trimEnd().toLowerCase(), line.slice(colon + 1));
  }
  const names: string[] = [];
  let canonical = '';
  for (const name of new Set(fieldNames.toLowerCase().split(':').map((n) => n.trim()))) {
    const value = last.get(name);
    if (value === undefined) continue;
    names.push(name);
    canonical += `${name}:${relaxedValue(value)}\r\n`;
  }
  return { canonical, signed: names.join(':') };
}

/** `DKIM-Signature: ` and the tags, folded before a tag once a line would pass 76 characters. */
function foldTags(tags: string[]): string {
  let out = 'DKIM-Signature:';
  let line = out.length;
  tags.forEach((tag, i) => {
    const piece = (i ? ';' : '') + ' ' + tag;
    if (i && line + piece.length > 76) {
      out += ';\r\n ' + tag;
      line = tag.length + 1;
    } else {
      out += piece;
      line += piece.length;
    }
  });
  return out;
}

/** The b= value in lines of at most 76 characters (whitespace in b= is ignored by verifiers). */
function foldBase64(b64: string): string {
  const parts: string[] = [];
  for (let i = 0; i < b64.length; i += 72) parts.push(b64.slice(i, i + 72));
  return parts.join('\r\n  ');
}
