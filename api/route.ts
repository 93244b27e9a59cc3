import type { Response } from 'express';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import type { Config } from '../runtime/config.js';
import type { Pool } from '../sql/pool.js';
import type { Tenant } from '../domain/tenancy/context.js';
import type { JobQueue } from '../domain/jobs.js';
import type { JsonSchema } from './validation.js';

/** What a web process hands its routes. */
export interface AppDeps {
  pool: Pool;
  clickhouse: ClickHouseClient;
  config: Config;
  logger: Logger;
  /** Enqueues jobs inside a transaction (pg-boss); web never starts workers. */
  queue: JobQueue;
}

export interface RouteContext<Q, P, B> {
  tenant: Tenant;
  query: Q;
  params: P;
  body: B;
  requestId: string;
  deps: AppDeps;
}

/**
 * One declaration per endpoint drives everything about it: the Express mount, authentication
 * scope, body limit, validation of path/query/body (and so the 400/413/415/422 answers), the
 * 405 Allow list and the OpenAPI document. Nothing else describes a route.
 */
export interface Route<Q = any, P = any, B = any> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path, e.g. /v1/senders/{id}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Required API key scope. */
  scope: string;
  params?: Record<string, JsonSchema>;
  query?: Record<string, JsonSchema>;
  body?: JsonSchema;
  bodyRequired?: boolean;
  /** Largest accepted body after decompression; default DEFAULT_MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  success: { status: number; description: string; schema?: JsonSchema; contentType?: string };
  /** Statuses this route can answer beyond the common ones (401, 403, 422, 500, 503). */
  errors?: number[];
  /** Returns the JSON body of `success`, or undefined when it wrote the response itself (streams). */
  handler(ctx: RouteContext<Q, P, B>, res: Response): Promise<unknown>;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export function defineRoute<Q = Record<string, never>, P = Record<string, never>, B = undefined>(route: Route<Q, P, B>): Route<Q, P, B> {
  return route;
}
