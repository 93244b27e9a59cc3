import type { NextFunction, Request, Response } from 'express';
import { authenticateSession, type SessionLifetime } from '../../domain/panel/sessions.js';
import { roleAllows, type PanelRole } from '../../domain/panel/roles.js';
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

/**
 * The panel's /v1/private routes (docs/panel.md): the session token first (anything wrong with it
 * is the one 401 above, the very same as the API's), then, for a route of an instance, the
 * membership: an instance the user is not a member of answers exactly as one that does not exist
 * (404 instance_not_found, no existence leak), a disabled instance or a role below the route's
 * 403 forbidden, the API's own 403. Using the session moves its expiry ahead (sliding), never past
 * its maximum age.
 */
export function requireSession(pool: Pool, lifetime: SessionLifetime, role: PanelRole | undefined) {
  return async function authenticateSessionRequest(req: Request, res: Response, next: NextFunction): Promise<void> {
    const bearer = /^Bearer ([^\s]+)$/i.exec(req.get('authorization') ?? '');
    if (!bearer) return sendUnauthorized(res);
    const slug = role ? req.get('x-instance-slug') ?? '' : null;
    const outcome = await authenticateSession(pool, bearer[1]!, slug || null, lifetime);
    if (outcome.kind === 'unauthenticated') return sendUnauthorized(res);
    res.locals.session = outcome.session;
    if (!role) return next();
    if (!slug) return sendProblem(res, problem('bad_request', 'X-Instance-Slug is required: the slug of an instance you are a member of', requestIdOf(res)));
    const member = outcome.membership;
    if (!member) return sendProblem(res, problem('instance_not_found', `instance ${slug} not found`, requestIdOf(res)));
    if (!member.enabled || !roleAllows(member.role, role)) return sendProblem(res, problem('forbidden', FORBIDDEN_DETAIL, requestIdOf(res)));
    res.locals.tenant = member.tenant;
    res.locals.role = member.role;
    return next();
  };
}
