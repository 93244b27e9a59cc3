import type { RequestListener } from 'node:http';

/**
 * The headers on every response of every listener: the public port (Express and the tracking
 * fast path ahead of it), the internal port, and the problem objects api/http/client-errors.ts writes
 * for requests Node's parser refuses. nosniff: a browser takes a response for the type it is
 * labelled with and never guesses another (a JSON error or a CSV echoing client text read as
 * HTML or script). Pages add their own (api/pages/public-pages.ts).
 */
export const EVERY_RESPONSE_HEADERS = { 'X-Content-Type-Options': 'nosniff' } as const;

const entries = Object.entries(EVERY_RESPONSE_HEADERS);

/**
 * `handler` with those headers set before it runs, so whatever answers (a route, a 404, the
 * error handler, a redirect, the pixel written with writeHead) sends them: writeHead merges the
 * headers set before it.
 */
export function withEveryResponseHeaders(handler: RequestListener): RequestListener {
  return (req, res) => {
    for (const [name, value] of entries) res.setHeader(name, value);
    return handler(req, res);
  };
}
