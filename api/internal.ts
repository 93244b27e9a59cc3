import { createHash, timingSafeEqual } from 'node:crypto';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { sendUnauthorized } from './http/authenticate.js';
import { errorHandler } from './http/errors.js';
import { healthz, readyz } from './http/health.js';
import { metricsEndpoint, type HttpMetrics } from './http/metrics.js';
import { problem, sendProblem } from './http/problem.js';
import { requestId, requestIdOf } from './http/request-context.js';
import type { AppDeps } from './http/route.js';

/**
 * The operator's endpoints. /readyz says which dependency is down and /metrics describes the
 * traffic: neither is for the public. They are served on the internal listener (INTERNAL_PORT,
 * on INTERNAL_HOST, loopback unless told), and on the public port only to a bearer of
 * INTERNAL_TOKEN. /healthz (the process answers, nothing more) stays public for routers.
 */
export const INTERNAL_PATHS = ['/healthz', '/readyz', '/metrics'] as const;

/** The internal listener's app: the three endpoints and nothing else (no API, no tracking). */
export function createInternalApp(deps: AppDeps, metrics: HttpMetrics): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.get('/healthz', healthz);
  app.get('/readyz', readyz(deps));
  app.get('/metrics', metricsEndpoint(metrics));
  app.use((req, res) => sendProblem(res, problem('not_found', `No route for ${req.method} ${req.path}`, requestIdOf(res))));
  app.use(errorHandler(deps.logger));
  return app;
}

/**
 * `Authorization: Bearer <INTERNAL_TOKEN>`, else the API's one 401. Compared as SHA-256 digests
 * in constant time, so neither the token's content nor its length leaks through timing.
 */
export function requireInternalToken(token: string) {
  const expected = digest(token);
  return function checkInternalToken(req: Request, res: Response, next: NextFunction): void {
    const given = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return next();
    sendUnauthorized(res);
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
