import http from 'node:http';
import https from 'node:https';
import { AnswerExcerpt, cleanText, RESPONSE_KEEP_BYTES } from './answer-excerpt.js';
import { portOf, receiverLookup, refusedLiteral, type ReceiverPolicy } from './receiver-address.js';

export { RESPONSE_KEEP_BYTES };

/** What one POST to a receiver gave. */
export interface PostOutcome {
  /** The HTTP status, or null when there was no answer (timeout, connection error, refused address). */
  statusCode: number | null;
  /** Why there was no answer; at most ERROR_KEEP_BYTES, clean text (answer-excerpt.ts). */
  error: string | null;
  /** An excerpt of the answer's body (answer-excerpt.ts); null with no answer. */
  response: string | null;
  durationMs: number;
  /** Retry-After of a 429 or 503, in seconds. */
  retryAfterSeconds: number | null;
}

const ERROR_KEEP_BYTES = 1024;

// Keep-alive agents: a busy receiver is called many times a second. Their sockets were opened
// through the lookup of the request that opened them (receiverLookup, under this process's one
// policy), so a reused one is to an address already checked; a socket is reused only for the
// same host and port. One pair per WEBHOOK_ALLOW_PRIVATE value, so no socket crosses policies.
const agents = {
  strict: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
  private: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
};

/** Retry-After as seconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * POST a signed event. The receiver has timeoutMs to answer (connect, send, the answer's status
 * and headers); past it, a failure with no status code. Once the status came, it decides the
 * attempt: the body is read only for its excerpt, until the excerpt is full, the body ends or
 * the timeout (a body that trickles in is not waited for). Receivers the policy refuses are
 * refused before connecting (literal addresses) or on the address the lookup gives, and store
 * no answer.
 */
export async function postEvent(opts: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  receivers: ReceiverPolicy;
}): Promise<PostOutcome> {
  const started = performance.now();
  const done = (o: Omit<PostOutcome, 'durationMs'>): PostOutcome => ({
    ...o,
    error: o.error === null ? null : cleanText(o.error, ERROR_KEEP_BYTES),
    durationMs: Math.round(performance.now() - started),
  });
  const url = new URL(opts.url);
  const literal = await refusedLiteral(url, opts.receivers);
  if (literal) return done({ statusCode: null, error: `receiver refused: ${literal}`, response: null, retryAfterSeconds: null });
  const isHttps = url.protocol === 'https:';
  const agent = agents[opts.receivers.allowPrivate ? 'private' : 'strict'][isHttps ? 'https' : 'http'];
  return new Promise((resolve) => {
    let settled = false;
    let status: number | null = null;
    let after: number | null = null;
    const excerpt = new AnswerExcerpt();
    const finish = (error: string | null, complete = false) => {
      if (settled) return;
      settled = true;
      resolve(
        done(
          status === null
            ? { statusCode: null, error: error ?? 'no answer', response: null, retryAfterSeconds: null }
            : { statusCode: status, error: null, response: excerpt.text(complete), retryAfterSeconds: after },
        ),
      );
    };
    const req = (isHttps ? https : http).request(url, {
      method: 'POST',
      agent,
      // Per request, not per agent: the check needs the port (own-listeners.ts).
      lookup: receiverLookup(portOf(url), opts.receivers) as never,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(opts.body),
        'user-agent': 'Cartero-Webhooks/1',
        ...opts.headers,
      },
    });
    // Bounds the whole exchange, also the reading of a body whose excerpt is already taken.
    const timer = setTimeout(() => {
      finish(`timeout after ${opts.timeoutMs} ms`);
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const refused = err.code === 'ERECEIVERREFUSED';
      finish(refused ? `receiver refused: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`);
    });
    req.on('response', (res) => {
      status = res.statusCode ?? null;
      after = status === 429 || status === 503 ? retryAfterSeconds(res.headers['retry-after']) : null;
      let total = 0;
      res.on('data', (chunk: Buffer) => {
        total += chunk.length;
        excerpt.push(chunk);
        if (excerpt.full) finish(null);
        // The rest is read and dropped (the socket stays reusable) unless it is large.
        if (total >= RESPONSE_KEEP_BYTES * 64) res.destroy();
      });
      res.on('end', () => {
        clearTimeout(timer);
        finish(null, true);
      });
      // Cut (by us past 64 KB, or by the receiver): what came is the excerpt.
      res.on('close', () => {
        clearTimeout(timer);
        finish(null);
      });
      res.on('error', () => finish(null));
    });
    req.end(opts.body);
  });
}
