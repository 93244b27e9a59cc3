import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../../errors/catalog.js';
import { problem } from './problem.js';
import { requestIdFrom } from './request-context.js';
import { EVERY_RESPONSE_HEADERS } from './response-headers.js';

/**
 * Requests Node's HTTP parser refuses before any handler sees them: headers over its 16 KB
 * (a URL that long included), a request not sent in time (WEB_*_TIMEOUT_MS), bytes that are not
 * HTTP. Node's own answer is a bare status line; here it is a problem object like every other
 * error (docs/api-conventions.md), then the connection closes, as Node's does.
 */
const ANSWERS: Record<string, { code: ErrorCode; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    code: 'request_header_fields_too_large',
    detail: 'The request line and headers exceed 16 KB; send long values in the body (or as several requests).',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', detail: 'The request was not received in time.' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { code: 'request_too_large', detail: 'Chunk extensions exceed the limit.' },
};
const MALFORMED = { code: 'bad_request' as const, detail: 'The request is not valid HTTP/1.1.' };

/** The server's 'clientError' listener. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset or a half-written answer: nothing can be said on this connection.
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const a = (err.code && ANSWERS[err.code]) || MALFORMED;
  const traceId = requestIdFrom(undefined);
  const p = problem(a.code, a.detail, traceId);
  const body = JSON.stringify(p);
  // Written by hand (no ServerResponse exists yet), so the headers every response carries are added here too.
  const every = Object.entries(EVERY_RESPONSE_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${traceId}\r\n${every}Connection: close\r\n\r\n${body}`,
  );
}
