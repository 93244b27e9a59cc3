import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { ValidationFailed } from '../domain/errors.js';
import type { Tenant } from '../domain/tenancy/context.js';
import type { PanelRole } from '../domain/panel/roles.js';
import type { Session } from '../domain/panel/sessions.js';
import { answerCheck } from './http/answer-check.js';
import { requireScope, requireSession } from './http/authenticate.js';
import { errorHandler } from './http/errors.js';
import { healthz, readyz } from './http/health.js';
import { requireInternalToken } from './internal.js';
import { createHttpMetrics, metricsEndpoint, type HttpMetrics } from './http/metrics.js';
import { buildOpenApi } from './openapi.js';
import { DOCS_PATHS, mountDocs } from './pages/docs-page.js';
import { mountPanel, PANEL_PATHS } from './pages/panel-page.js';
import { problem, sendProblem } from './http/problem.js';
import { accessLog, requestId, requestIdOf } from './http/request-context.js';
import { bodyReader, compileInputs, normalizeQuery } from './http/request-input.js';
import type { AppDeps, Route } from './http/route.js';
import { routes as declaredRoutes } from './routes/index.js';

function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

function pathMatcher(path: string): RegExp {
  const pattern = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
  return new RegExp(`^${pattern}/?$`);
}

/** No credentials to check: a public route's token is its handler's to verify. */
function noCredentials(_req: Request, _res: Response, next: NextFunction): void {
  next();
}

/** The chain for one declared route: auth → body → validation → handler. */
function mount(app: express.Express, route: Route, deps: AppDeps, options: AppOptions): void {
  const inputs = compileInputs(route);
  const auth =
    route.auth.kind === 'api_key'
      ? requireScope(deps.pool, route.auth.scope)
      : route.auth.kind === 'session'
        ? requireSession(deps.pool, { ttlSeconds: deps.config.panel.sessionTtlSeconds, maxAgeSeconds: deps.config.panel.sessionMaxAgeSeconds }, route.auth.role)
        : noCredentials;
  const handle = async (req: Request, res: Response) => {
    const params = inputs.params({ ...req.params });
    const query = inputs.query(normalizeQuery(route, req.query as Record<string, unknown>));
    let body: unknown = req.body;
    if (inputs.body) {
      if (body === undefined) {
        if (route.bodyRequired ?? true) {
          throw new ValidationFailed([{ pointer: '', code: 'missing', message: 'A JSON body is required' }]);
        }
      } else {
        body = inputs.body(body);
      }
    }
    // A public route's handler type has no tenant: the key's tenant exists for API-key routes only,
    // the member's for panel routes of an instance (with its role and the session).
    const result = await route.handler(
      {
        tenant: res.locals.tenant as Tenant,
        session: res.locals.session as Session,
        role: res.locals.role as PanelRole,
        params,
        query,
        body,
        requestId: requestIdOf(res),
        deps,
        client: { ip: req.ip, userAgent: req.get('user-agent') },
      },
      res,
    );
    if (result !== undefined && !res.headersSent) res.status(route.success.status).json(result);
  };
  const tag = (_req: Request, res: Response, next: NextFunction) => {
    res.locals.routePattern = route.path;
    next();
  };
  const chain = [tag, auth, bodyReader(route), handle];
  app[route.method](expressPath(route.path), ...(options.checkAnswers ? [answerCheck(route, deps.logger), ...chain] : chain));
}

export interface AppOptions {
  /**
   * Hold every answer of a route to its declaration (api/http/answer-check.ts): an undeclared
   * status or a body off its schema becomes a 500. The tests' web turns it on
   * (test/helpers/web.ts), so each API test also checks the contract; production does not pay
   * for it.
   */
  checkAnswers?: boolean;
}

/**
 * The web process's Express app. `metrics` is shared with the internal listener, which serves
 * it (runtime/web.ts). `extraRoutes` lets a test mount a fixture route through the
 * very same pipeline (auth, limits, validation, errors) without adding it to the public API.
 */
export function createApp(deps: AppDeps, extraRoutes: Route[] = [], metrics: HttpMetrics = createHttpMetrics(), options: AppOptions = {}): express.Express {
  const app = express();
  const routes = [...declaredRoutes, ...extraRoutes];
  app.disable('x-powered-by');
  // ETags would differ between otherwise identical 401s (their trace_id differs).
  app.set('etag', false);
  app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');

  app.use(requestId);
  app.use(accessLog(deps.logger));
  app.use(metrics.middleware);

  app.get('/healthz', healthz);
  // /readyz and /metrics: the internal listener's (runtime/web.ts), and here only to a bearer of
  // INTERNAL_TOKEN; without one they are unknown paths on the public port (api/internal.ts).
  const token = deps.config.internalToken;
  if (token) {
    app.get('/readyz', requireInternalToken(token), readyz(deps));
    app.get('/metrics', requireInternalToken(token), metricsEndpoint(metrics));
  }
  const openapi = buildOpenApi(routes, deps.config.publicUrl);
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  // The interactive reference of that document, and / leading to it.
  mountDocs(app);
  // The operator panel's page and its own modules (docs/panel.md).
  mountPanel(app);

  for (const route of routes) mount(app, route, deps, options);

  // Unknown route: 404 not_found; a known path with another verb: 405 with Allow. The known
  // paths are the declared routes' and the infrastructure's above, nothing written by hand.
  const known = [
    ...routes.map((r) => ({ re: pathMatcher(r.path), method: r.method.toUpperCase() })),
    ...['/healthz', ...(token ? ['/readyz', '/metrics'] : []), '/v1/openapi.json', ...DOCS_PATHS, ...PANEL_PATHS].map((p) => ({ re: pathMatcher(p), method: 'GET' })),
  ];
  app.use((req, res) => {
    const allowed = [...new Set(known.filter((k) => k.re.test(req.path)).map((k) => k.method))];
    if (allowed.length) {
      if (allowed.includes('GET')) allowed.push('HEAD');
      res.setHeader('Allow', allowed.join(', '));
      return sendProblem(res, problem('method_not_allowed', `Method ${req.method} is not allowed on this path`, requestIdOf(res)));
    }
    sendProblem(res, problem('not_found', `No route for ${req.method} ${req.path}`, requestIdOf(res)));
  });
  app.use(errorHandler(deps.logger));
  return app;
}
