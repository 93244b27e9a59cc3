import http from 'node:http';
import https from 'node:https';
import { guardedLookup, refusedLiteral } from './receiver-address.js';

/** What one POST to a receiver gave. */
export interface PostOutcome {
  /** The HTTP status, or null when there was no answer (timeout, connection error, refused address). */
  statusCode: number | null;
  error: string | null;
  /** The first 1 KB of the answer's body. */
  response: string | null;
  durationMs: number;
  /** Retry-After of a 429 or 503, in seconds. */
  retryAfterSeconds: number | null;
}

export const RESPONSE_KEEP_BYTES = 1024;

// Keep-alive agents: a busy receiver is called many times a second. Their sockets were opened
// through the guarded lookup, so a reused one is to an address already checked.
const agents = {
  guarded: { http: new http.Agent({ keepAlive: true, lookup: guardedLookup as never }), https: new https.Agent({ keepAlive: true, lookup: guardedLookup as never }) },
  open: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
};

/** Retry-After as seconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * POST a signed event. The whole exchange (connect, send, answer headers and the kept part of the
 * body) must end within timeoutMs; past it, a failure with no status code. Receivers on non-public
 * addresses are refused (before connecting) unless allowPrivate.
 */
export function postEvent(opts: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}): Promise<PostOutcome> {
  const started = performance.now();
  const done = (o: Omit<PostOutcome, 'durationMs'>): PostOutcome => ({ ...o, durationMs: Math.round(performance.now() - started) });
  const url = new URL(opts.url);
  if (!opts.allowPrivate) {
    const literal = refusedLiteral(url);
    if (literal) return Promise.resolve(done({ statusCode: null, error: `receiver refused: address ${literal} is not public`, response: null, retryAfterSeconds: null }));
  }
  const isHttps = url.protocol === 'https:';
  const agent = (opts.allowPrivate ? agents.open : agents.guarded)[isHttps ? 'https' : 'http'];
  return new Promise((resolve) => {
    let settled = false;
    const finish = (o: Omit<PostOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(o));
    };
    const req = (isHttps ? https : http).request(url, {
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(opts.body),
        'user-agent': 'Cartero-Webhooks/1',
        ...opts.headers,
      },
    });
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `timeout after ${opts.timeoutMs} ms`, response: null, retryAfterSeconds: null });
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      const refused = err.code === 'ERECEIVERREFUSED';
      finish({ statusCode: null, error: refused ? `receiver refused: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`, response: null, retryAfterSeconds: null });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let total = 0;
      const status = res.statusCode ?? null;
      const after = status === 429 || status === 503 ? retryAfterSeconds(res.headers['retry-after']) : null;
      const end = () =>
        finish({ statusCode: status, error: null, response: Buffer.concat(chunks).subarray(0, RESPONSE_KEEP_BYTES).toString('utf8'), retryAfterSeconds: after });
      res.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (kept < RESPONSE_KEEP_BYTES) {
          chunks.push(chunk);
          kept += chunk.length;
        }
        // The rest is read and dropped (the socket stays reusable) unless it is large.
        if (total >= RESPONSE_KEEP_BYTES * 64) {
          end();
          res.destroy();
        }
      });
      res.on('end', end);
      res.on('error', end);
    });
    req.end(opts.body);
  });
}
