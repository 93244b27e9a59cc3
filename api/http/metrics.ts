import type { NextFunction, Request, Response } from 'express';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface HttpMetrics {
  registry: Registry;
  middleware(req: Request, res: Response, next: NextFunction): void;
}

/** One registry per app, so several apps in one test process do not collide. */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'cartero_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    registry,
    middleware(req, res, next) {
      const end = duration.startTimer();
      res.on('finish', () => {
        // The route pattern, never the raw path: ids in label values would explode cardinality.
        const route = (res.locals.routePattern as string | undefined) ?? 'unmatched';
        end({ method: req.method, route, status: String(res.statusCode) });
      });
      next();
    },
  };
}

/** GET /metrics: the registry in Prometheus's text format (internal port, or INTERNAL_TOKEN). */
export function metricsEndpoint(metrics: HttpMetrics) {
  return async function serveMetrics(_req: Request, res: Response): Promise<void> {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  };
}
