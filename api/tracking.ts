import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import express from 'express';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Histogram } from 'prom-client';
import { readTrackingToken, type TrackingToken } from '../domain/tracking/tokens.js';
import type { HitRecorder } from '../domain/tracking/record.js';
import { findUnsubscribeTarget, resubscribe, unsubscribe, type UnsubscribeTarget } from '../domain/tracking/unsubscribe.js';
import type { Pool } from '../sql/pool.js';
import type { HttpMetrics } from './metrics.js';
import { problem, sendProblem } from './problem.js';
import { requestIdFrom, requestIdOf } from './request-context.js';
import { unsubscribePage, type PageState } from './unsubscribe-page.js';

/**
 * The public links Cartero puts in every mail (domain/mail/render.ts): no API key, the signed
 * token is the credential. They answer recipients and their mail software, not integrators:
 *  - GET /t/o/{token}: the open pixel, a 1x1 GIF that is never cached;
 *  - GET /t/c/{token}: 302 to the URL signed into the token (no other target is ever possible);
 *  - GET /u/{token}: a confirmation page (never unsubscribes: link scanners fetch it);
 *    POST /u/{token}: unsubscribes (RFC 8058 one-click, or the page's form), or resubscribes.
 * Opens and clicks answer once their outbox row is committed (domain/tracking/record.ts).
 *
 * Opens and clicks are the hot path (every mail opened, every link followed), so the web process
 * answers the common case of GET/HEAD /t/o and /t/c with a plain node:http handler ahead of Express
 * (trackingFastPath below, wired in runtime/web.ts); the Express routes here answer everything
 * else on those paths exactly as before (other spellings of the path, conditional requests,
 * invalid click tokens, errors) and remain the reference behaviour the fast path reproduces.
 */
export interface TrackingDeps {
  pool: Pool;
  recorder: HitRecorder;
  secret: () => Promise<string>;
  logger: Logger;
  /** The app's /metrics registry: fast-path answers are counted there like Express's. */
  metrics?: HttpMetrics;
}

export const TRACKING_PATHS = ['/t/o/{token}', '/t/c/{token}', '/u/{token}'] as const;

// A transparent 1x1 GIF (42 bytes).
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NO_CACHE = 'no-store, no-cache, must-revalidate, private, max-age=0';
// One-click bodies are one short field; the page's form adds a reason and a comment.
const MAX_FORM_BYTES = 16 * 1024;

export function mountTracking(app: express.Express, deps: TrackingDeps): void {
  app.get('/t/o/:token', tag('/t/o/{token}'), async (req, res) => {
    const token = readTrackingToken(await deps.secret(), String(req.params.token), 'open');
    res.set({ 'Cache-Control': NO_CACHE, Pragma: 'no-cache', Expires: '0' });
    if (token) await recordHit(deps, token, { userAgent: req.get('user-agent'), ip: req.ip, head: false, reqId: requestIdOf(res) });
    res.type('image/gif').send(PIXEL);
  });

  app.get('/t/c/:token', tag('/t/c/{token}'), async (req, res) => {
    const token = readTrackingToken(await deps.secret(), String(req.params.token), 'click');
    if (!token) return notFound(res, 'This link is not valid');
    // Express answers HEAD with the GET route.
    await recordHit(deps, token, { userAgent: req.get('user-agent'), ip: req.ip, head: req.method === 'HEAD', reqId: requestIdOf(res) });
    res.set({ 'Cache-Control': NO_CACHE, 'Referrer-Policy': 'no-referrer' });
    res.redirect(302, token.url);
  });

  app.get('/u/:token', tag('/u/{token}'), async (req, res) => {
    const target = await unsubscribeTarget(deps, req, res);
    if (!target) return;
    page(res, 200, { step: target.unsubscribed ? 'unsubscribed' : 'confirm', target });
  });

  app.post('/u/:token', tag('/u/{token}'), express.raw({ type: () => true, limit: MAX_FORM_BYTES }), async (req, res) => {
    const target = await unsubscribeTarget(deps, req, res);
    if (!target) return;
    const form = readForm(req);
    if (form.get('action') === 'resubscribe') {
      await resubscribe(target.tenant, deps.pool, target);
      return page(res, 200, { step: 'resubscribed', target });
    }
    // RFC 8058: the mail client POSTs List-Unsubscribe=One-Click, with no person on a page.
    const oneClick = form.get('List-Unsubscribe') === 'One-Click';
    await unsubscribe(target.tenant, deps.pool, target, {
      method: oneClick ? 'one_click' : 'page',
      reason: form.get('reason'),
      comment: form.get('comment'),
      userAgent: req.get('user-agent') ?? null,
      ip: req.ip ?? null,
    });
    page(res, 200, { step: 'unsubscribed', target });
  });

  fastPaths.set(app, fastPath(app, deps));
}

/**
 * Records an open or a click (both the Express routes and the fast path). A recipient's mail client
 * shows the image and follows the link whatever happens: an event Postgres could not take is
 * logged (it cannot be kept anywhere durable) and the answer still goes out. A HEAD on a click
 * link is flagged at once: no person clicks with HEAD, scanners do (the pump flags the rest).
 */
function recordHit(
  deps: Pick<TrackingDeps, 'recorder' | 'logger'>,
  token: Extract<TrackingToken, { kind: 'open' | 'click' }>,
  request: { userAgent: string | undefined; ip: string | undefined; head: boolean; reqId: string },
): Promise<void> {
  const hit =
    token.kind === 'open'
      ? { kind: 'open' as const, mailId: token.mail_id }
      : { kind: 'click' as const, mailId: token.mail_id, url: token.url, ...(request.head ? { machine: 'head_request' } : {}) };
  return deps.recorder
    .record({ ...hit, userAgent: request.userAgent, ip: request.ip, at: new Date() })
    .catch((err) => deps.logger.error({ err, reqId: request.reqId }, `${token.kind} not recorded`));
}

/** /metrics labels an answer by its route pattern, as it does the API's routes (api/app.ts). */
function tag(pattern: (typeof TRACKING_PATHS)[number]) {
  return (_req: Request, res: Response, next: express.NextFunction) => {
    res.locals.routePattern = pattern;
    next();
  };
}

async function unsubscribeTarget(deps: TrackingDeps, req: Request, res: Response): Promise<UnsubscribeTarget | undefined> {
  const token = readTrackingToken(await deps.secret(), String(req.params.token), 'unsubscribe');
  if (!token) {
    notFound(res, 'This unsubscribe link is not valid');
    return undefined;
  }
  const target = await findUnsubscribeTarget(deps.pool, token.mail_id);
  if (!target) notFound(res, 'This unsubscribe link has expired: the mail it came with is no longer kept');
  return target;
}

/**
 * The form fields of a POST, whatever its encoding: urlencoded (RFC 8058 and our page) is read
 * properly; a multipart one-click body (RFC 8058 allows it) is recognised by its field.
 */
function readForm(req: Request): URLSearchParams {
  const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  if (/^multipart\/form-data/i.test(req.get('content-type') ?? '')) {
    const form = new URLSearchParams();
    if (/name="List-Unsubscribe"\s*\r?\n\r?\nOne-Click/i.test(raw)) form.set('List-Unsubscribe', 'One-Click');
    return form;
  }
  return new URLSearchParams(raw);
}

function page(res: Response, status: number, state: PageState): void {
  res.status(status).set({ 'Cache-Control': NO_CACHE, 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'" });
  res.type('html').send(unsubscribePage(state));
}

/** A browser gets a readable page; anything else the API's problem object. */
function notFound(res: Response, detail: string): void {
  if (res.req.accepts(['json', 'html']) === 'html') {
    res.status(404).set('Cache-Control', NO_CACHE).type('html').send(unsubscribePage({ step: 'invalid', detail }));
    return;
  }
  sendProblem(res, problem(404, 'not_found', detail, requestIdOf(res)));
}

// ------------------------------------------------------------------ the fast path (node:http)

// Express's own helpers, at the versions it uses, so the fast path derives the client address
// (TRUST_PROXY), the redirect's content negotiation and its Location exactly as Express does.
// Loaded with require: they are CommonJS and ship no type declarations.
const require = createRequire(import.meta.url);
type TrustProxy = (addr: string, hop: number) => boolean;
const proxyaddr = require('proxy-addr') as (req: IncomingMessage, trust: TrustProxy) => string;
const accepts = require('accepts') as (req: IncomingMessage) => { types(types: string[]): string | false };
const encodeUrl = require('encodeurl') as (url: string) => string;
const escapeHtml = require('escape-html') as (text: string) => string;

// The links exactly as domain/mail/render.ts writes them (the token is base64url "." base64url).
// Any other spelling Express's router also accepts (a trailing slash, another case, a
// percent-escape) is left to it, as are other methods (405) and the unsubscribe links.
const CANONICAL = /^\/t\/([oc])\/([\w.-]+)(?:\?|$)/;
const ROUTE = { o: '/t/o/{token}', c: '/t/c/{token}' } as const;
const DURATION_METRIC = 'cartero_http_request_duration_seconds';

/**
 * Answers a request if it is an open or a click the fast path takes (returns true), else returns
 * false and the caller hands the request to the Express app.
 */
export type TrackingFastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const fastPaths = new WeakMap<express.Express, TrackingFastPath>();

/** The fast path of an app built by api/app.ts (runtime/web.ts puts it ahead of the app). */
export function trackingFastPath(app: express.Express): TrackingFastPath | undefined {
  return fastPaths.get(app);
}

/**
 * GET/HEAD /t/o/{token} and /t/c/{token} without Express: a third of the web's CPU per hit and
 * 1.5-2.1 times the hits per second of the Express routes at 50 connections (docs/performance-history.md,
 * "Tracking hits (issue 4)"), whose router, request/response prototypes and middleware chain cost
 * more CPU than the hit itself.
 * It keeps every convention of those answers: X-Request-Id (a plain incoming one kept), the
 * same status, headers and bodies byte for byte, HEAD (a click flagged head_request), req.ip
 * under TRUST_PROXY (Express's compiled trust function), /metrics and the access log. Whatever
 * it does not answer itself goes to Express unchanged: an invalid click token (the 404 page or
 * problem object), a conditional pixel request (Express may answer 304), a tracking secret that
 * cannot be read (Postgres down: Express's error answer).
 */
function fastPath(app: express.Express, deps: TrackingDeps): TrackingFastPath {
  const { logger } = deps;
  const duration = deps.metrics?.registry.getSingleMetric(DURATION_METRIC) as Histogram<'method' | 'route' | 'status'> | undefined;

  async function answer(req: IncomingMessage, res: ServerResponse, kind: 'o' | 'c', raw: string, start: number): Promise<void> {
    let secret: string;
    try {
      secret = await deps.secret();
    } catch {
      app(req, res);
      return;
    }
    const method = req.method!;
    const head = method === 'HEAD';
    const reqId = requestIdFrom(req.headers['x-request-id']);
    let status: number;
    if (kind === 'o') {
      const token = readTrackingToken(secret, raw, 'open');
      if (token) {
        const ip = proxyaddr(req, app.get('trust proxy fn') as TrustProxy);
        await recordHit(deps, token, { userAgent: req.headers['user-agent'], ip, head, reqId });
      }
      status = 200;
      res.writeHead(status, {
        'X-Request-Id': reqId,
        'Cache-Control': NO_CACHE,
        Pragma: 'no-cache',
        Expires: '0',
        'Content-Type': 'image/gif',
        'Content-Length': PIXEL.length,
      });
      res.end(head ? undefined : PIXEL);
    } else {
      const token = readTrackingToken(secret, raw, 'click');
      if (!token) {
        app(req, res);
        return;
      }
      const ip = proxyaddr(req, app.get('trust proxy fn') as TrustProxy);
      await recordHit(deps, token, { userAgent: req.headers['user-agent'], ip, head, reqId });
      // Express's res.redirect(302, url): Location through encodeurl, a body negotiated between
      // text and html (none for other Accepts), Vary: Accept.
      const location = encodeUrl(token.url);
      const type = accepts(req).types(['text', 'html']);
      const body =
        type === 'text'
          ? `Found. Redirecting to ${location}`
          : type === 'html'
            ? `<!DOCTYPE html><head><title>Found</title></head><body><p>Found. Redirecting to ${escapeHtml(location)}</p></body>`
            : '';
      const headers: Record<string, string | number> = {
        'X-Request-Id': reqId,
        'Cache-Control': NO_CACHE,
        'Referrer-Policy': 'no-referrer',
        Location: location,
        Vary: 'Accept',
      };
      if (type) headers['Content-Type'] = `text/${type === 'text' ? 'plain' : 'html'}; charset=utf-8`;
      headers['Content-Length'] = Buffer.byteLength(body);
      status = 302;
      res.writeHead(status, headers);
      res.end(head ? undefined : body);
    }
    // What api/metrics.ts and api/request-context.ts's accessLog do for an Express answer.
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
      // Not reached by design (recording failures are caught above); answered as Express would.
      logger.error({ err, method, path: url.split('?')[0] }, 'unhandled error');
      if (res.headersSent) return void res.destroy();
      const id = randomUUID();
      const json = JSON.stringify(problem(500, 'internal_error', 'An unexpected error occurred', id));
      res.writeHead(500, { 'X-Request-Id': id, 'Content-Type': 'application/problem+json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
      res.end(json);
    });
    return true;
  };
}

