/**
 * What is stored of a receiver's answer (issue 24): a bounded excerpt that Postgres always
 * accepts, whatever the receiver sent. The body was stored as `Buffer.toString('utf8')` of its
 * first 1 KB: a NUL byte in it made the settle transaction fail (`invalid byte sequence`), and
 * the delivery was sent again and again, never settled, never paused.
 *
 * So: at most RESPONSE_KEEP_BYTES bytes of the answer, decoded as UTF-8 with invalid bytes as
 * U+FFFD (never a multi-byte character cut in two: a sequence the cut leaves incomplete is
 * dropped), C0 control characters but tab, line feed and carriage return (NUL among them) and
 * DEL as U+FFFD, and the result again at most RESPONSE_KEEP_BYTES bytes of UTF-8 (each
 * replaced byte grows to three).
 */
export const RESPONSE_KEEP_BYTES = 1024;

// C0 controls but \t \n \r, and DEL: NUL is refused by Postgres text, the rest only garble logs.
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text Postgres accepts and a reader can show: controls replaced, at most maxBytes of UTF-8, cut between characters. */
export function cleanText(text: string, maxBytes: number): string {
  // A lone surrogate (possible in a JS string, not in decoded UTF-8) is U+FFFD too.
  const clean = text.replace(CONTROLS, '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
  if (Buffer.byteLength(clean) <= maxBytes) return clean;
  let bytes = 0;
  let end = 0;
  for (const ch of clean) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > maxBytes) break;
    bytes += n;
    end += ch.length;
  }
  return clean.slice(0, end);
}

/**
 * Collects the first RESPONSE_KEEP_BYTES bytes of a body as it streams; `text(complete)` is the
 * excerpt (complete: the body ended within them, so an incomplete last sequence is invalid, not cut).
 */
export class AnswerExcerpt {
  private readonly chunks: Buffer[] = [];
  private kept = 0;

  get full(): boolean {
    return this.kept >= RESPONSE_KEEP_BYTES;
  }

  push(chunk: Buffer): void {
    if (this.full) return;
    const part = chunk.subarray(0, RESPONSE_KEEP_BYTES - this.kept);
    this.chunks.push(part);
    this.kept += part.length;
  }

  text(complete: boolean): string {
    const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    const bytes = Buffer.concat(this.chunks);
    // stream: true holds back a trailing incomplete sequence (cut by the limit); the final call
    // turns it into U+FFFD when the body really ended there.
    const text = complete ? decoder.decode(bytes) : decoder.decode(bytes, { stream: true });
    return cleanText(text, RESPONSE_KEEP_BYTES);
  }
}
