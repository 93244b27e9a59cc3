import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type express from 'express';
import type { Histogram } from 'prom-client';
import type { TrackingToken } from '../../domain/tracking/tokens.js';
import type { HttpMetrics } from '../http/metrics.js';
import { problem } from '../http/problem.js';
import { requestIdFrom } from '../http/request-context.js';
import type { AppDeps } from '../http/route.js';
import { readLinkToken } from '../http/signed-links.js';
import { CLICK_HEADERS, PIXEL, PIXEL_HEADERS, recordHit } from './hits.js';

/**
 * GET/HEAD /t/o/{token} and /t/c/{token} answered without Express, ahead of it (runtime/web.ts):
 * opens and clicks are the one hot path of the web process (every mail opened, every link
 * followed), and Express's router, request/response prototypes and middleware chain cost more
 * CPU than the hit itself. Measured with bench/track both ways: docs/performance.md.
 *
 * The routes of api/routes/tracking.ts stay the reference: this handler reproduces their answers
 * byte for byte (test/tracking-fast-path.test.ts compares the two): status, headers, body,
 * X-Request-Id (a plain incoming one kept), HEAD (a click flagged head_request), req.ip under
 * TRUST_PROXY (Express's compiled trust function), /metrics and the access log. Recording the hit
 * and the fixed headers come from api/tracking/hits.ts, shared with those routes. Whatever it
 * does not answer goes to Express unchanged: another spelling of the path (a trailing slash,
 * another case, a percent-escape), other methods (405), an invalid click token (the 404 page or
 * problem object), a conditional pixel request (Express may answer it 304), a signing key that
 * cannot be read (Postgres down: Express's error answer).
 */

// Express's own helpers, at the versions it uses, so the client address (TRUST_PROXY), the
// redirect's content negotiation and its Location come out exactly as Express makes them.
// Loaded with require: they are CommonJS and ship no type declarations.
const require = createRequire(import.meta.url);
type TrustProxy = (addr: string, hop: number) => boolean;
const proxyaddr = require('proxy-addr') as (req: IncomingMessage, trust: TrustProxy) => string;
const accepts = require('accepts') as (req: IncomingMessage) => { types(types: string[]): string | false };
const encodeUrl = require('encodeurl') as (url: string) => string;
const escapeHtml = require('escape-html') as (text: string) => string;

// The links exactly as domain/mail/render.ts writes them (the token is base64url "." base64url).
const CANONICAL = /^\/t\/([oc])\/([\w.-]+)(?:\?|$)/;
const ROUTE = { o: '/t/o/{token}', c: '/t/c/{token}' } as const;
const DURATION_METRIC = 'cartero_http_request_duration_seconds';

/**
 * Answers a request if it is an open or a click it takes (returns true), else returns false and
 * the caller hands the request to the Express app.
 */
export type TrackingFastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The fast path in front of `app`, the Express app api/app.ts built with the same deps and metrics. */
export function trackingFastPath(app: express.Express, deps: AppDeps, metrics: HttpMetrics): TrackingFastPath {
  const { logger } = deps;
  const duration = metrics.registry.getSingleMetric(DURATION_METRIC) as Histogram<'method' | 'route' | 'status'> | undefined;
  const clientIp = (req: IncomingMessage) => proxyaddr(req, app.get('trust proxy fn') as TrustProxy);

  async function answer(req: IncomingMessage, res: ServerResponse, kind: 'o' | 'c', raw: string, start: number): Promise<void> {
    let token: Extract<TrackingToken, { kind: 'open' | 'click' }> | undefined;
    try {
      token = await readLinkToken(deps, raw, kind === 'o' ? 'open' : 'click');
    } catch {
      app(req, res);
      return;
    }
    const method = req.method!;
    const head = method === 'HEAD';
    const reqId = requestIdFrom(req.headers['x-request-id']);
    let status: number;
    if (kind === 'o') {
      if (token) await recordHit(deps, token, { userAgent: req.headers['user-agent'], ip: clientIp(req), head: false, reqId });
      status = 200;
      // The header order of Express's answer: X-Request-Id (middleware), res.set, res.type, res.send.
      res.writeHead(status, { 'X-Request-Id': reqId, ...PIXEL_HEADERS, 'Content-Type': 'image/gif', 'Content-Length': PIXEL.length });
      res.end(head ? undefined : PIXEL);
    } else {
      if (token?.kind !== 'click') {
        app(req, res);
        return;
      }
      await recordHit(deps, token, { userAgent: req.headers['user-agent'], ip: clientIp(req), head, reqId });
      // Express's res.redirect(302, url): Location through encodeurl, a body negotiated between
      // text and html (none for other Accepts), Vary: Accept, Content-Length even for HEAD.
      const location = encodeUrl(token.url);
      const type = accepts(req).types(['text', 'html']);
      const body =
        type === 'text'
          ? `Found. Redirecting to ${location}`
          : type === 'html'
            ? `<!DOCTYPE html><head><title>Found</title></head><body><p>Found. Redirecting to ${escapeHtml(location)}</p></body>`
            : '';
      const headers: Record<string, string | number> = { 'X-Request-Id': reqId, ...CLICK_HEADERS, Location: location, Vary: 'Accept' };
      if (type) headers['Content-Type'] = `text/${type === 'text' ? 'plain' : 'html'}; charset=utf-8`;
      headers['Content-Length'] = Buffer.byteLength(body);
      status = 302;
      res.writeHead(status, headers);
      res.end(head ? undefined : body);
    }
    // What api/http/metrics.ts and api/http/request-context.ts's accessLog do for an Express answer.
    const seconds = (performance.now() - start) / 1000;
    duration?.observe({ method, route: ROUTE[kind], status: String(status) }, seconds);
    if (logger.isLevelEnabled('debug')) {
      logger.debug({ reqId, method, path: req.url!.split('?')[0], status, ms: seconds * 1000 }, 'request');
    }
  }

  return (req, res) => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url!;
    if (url.charCodeAt(1) !== 116 /* t */ || url.charCodeAt(2) !== 47 /* / */) return false;
    const m = CANONICAL.exec(url);
    if (!m) return false;
    const kind = m[1] as 'o' | 'c';
    // res.send's freshness check can answer a conditional pixel request 304: Express's call.
    if (kind === 'o' && (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined)) return false;
    answer(req, res, kind, m[2]!, performance.now()).catch((err) => {
      // Not reached by design (recording failures are caught in recordHit); answered as Express would.
      logger.error({ err, method, path: url.split('?')[0] }, 'unhandled error');
      if (res.headersSent) return void res.destroy();
      const id = randomUUID();
      const json = JSON.stringify(problem('internal_error', 'An unexpected error occurred', id));
      res.writeHead(500, { 'X-Request-Id': id, 'Content-Type': 'application/problem+json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
      res.end(json);
    });
    return true;
  };
}
