import type { NextFunction, Request, Response } from 'express';
import { authenticate } from '../../domain/tenancy/authenticate.js';
import { clientAddress } from '../../domain/tenancy/ip.js';
import type { Pool } from '../../sql/pool.js';
import { problem, sendProblem } from './problem.js';
import { requestIdOf } from './request-context.js';

// Generic details: the real reason is never disclosed (support correlates by X-Request-Id).
const UNAUTHORIZED_DETAIL = 'Authentication credentials are missing or invalid';
const FORBIDDEN_DETAIL = 'The credentials do not allow this operation';
const IP_DETAIL = 'The origin address of the request is not allowed';

/**
 * Every 401 is built here and only here, so all of them are identical (status, body apart from
 * trace_id, headers apart from X-Request-Id) whatever the cause.
 */
export function sendUnauthorized(res: Response): void {
  sendProblem(res, problem('unauthorized', UNAUTHORIZED_DETAIL, requestIdOf(res)), { 'WWW-Authenticate': 'Bearer' });
}

export function requireScope(pool: Pool, scope: string) {
  return async function authenticateRequest(req: Request, res: Response, next: NextFunction): Promise<void> {
    const outcome = await authenticate(pool, {
      authorization: req.get('authorization'),
      slug: req.get('x-instance-slug'),
      // req.ip honours TRUST_PROXY: X-Forwarded-For is believed only from trusted proxies.
      ip: clientAddress(req.ip),
      scope,
    });
    switch (outcome.kind) {
      case 'unauthenticated':
        return sendUnauthorized(res);
      case 'forbidden':
        return sendProblem(res, problem('forbidden', FORBIDDEN_DETAIL, requestIdOf(res)));
      case 'ip_not_allowed':
        return sendProblem(res, problem('ip_not_allowed', IP_DETAIL, requestIdOf(res)));
      case 'ok':
        res.locals.tenant = outcome.tenant;
        res.locals.keyId = outcome.keyId;
        return next();
    }
  };
}
