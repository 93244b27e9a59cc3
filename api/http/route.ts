import type { Response } from 'express';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.js';
import type { Pool } from '../../sql/pool.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { SCOPES } from '../../domain/tenancy/api-keys.js';
import type { JobQueue } from '../../domain/job-queue.js';
import type { JsonSchema } from '../../domain/validation.js';
import type { DocumentProcessor } from '../../domain/templates/render-pool.js';
import type { PanelRole } from '../../domain/panel/roles.js';
import type { Session } from '../../domain/panel/sessions.js';

/** What a web process hands its routes. */
export interface AppDeps {
  pool: Pool;
  /**
   * For the few statements that may rightly run for minutes (the panel's CSV imports, which
   * stream a whole file into one transaction): no client-side bound on a statement, unlike
   * `pool`'s DATABASE_QUERY_TIMEOUT_MS, and few connections (domain/panel/import-runs.ts lets 4
   * imports run at once in an instance).
   */
  bulkPool: Pool;
  /** Listings, the dashboard, /readyz: silence bounded by CLICKHOUSE_REQUEST_TIMEOUT_MS. */
  clickhouse: ClickHouseClient;
  /**
   * The streamed exports: silence between chunks bounded by CLICKHOUSE_EXPORT_IDLE_TIMEOUT_MS (the
   * client's timeout applies to the whole stream), the first byte by CLICKHOUSE_REQUEST_TIMEOUT_MS
   * (analytics/export/stream.ts).
   */
  clickhouseExports: ClickHouseClient;
  config: Config;
  logger: Logger;
  /** Enqueues jobs inside a transaction (pg-boss); web never starts workers. */
  queue: JobQueue;
  /** Checks and renders template documents off the event loop (domain/templates/render-pool.ts). */
  templates: DocumentProcessor;
}

export type Scope = (typeof SCOPES)[number];

/**
 * Who may call a route.
 *  - api_key: `Authorization: Bearer <key>` and `X-Instance-Slug`, the key holding `scope`
 *    (api/http/authenticate.ts answers 401/403 before anything else runs); the handler gets the
 *    key's tenant.
 *  - public: no credentials. For the links Cartero puts in mails (open pixel, click, unsubscribe,
 *    later confirmation and form pages) the signed token in the path is the credential: the
 *    handler verifies it (domain/tracking/tokens.ts) and answers a bad one as that page must
 *    (the pixel still shows, a link is a 404 page), and finds the tenant from what it signs.
 *  - session: the operator panel's /v1/private API (docs/panel.md): `Authorization: Bearer
 *    <session token>` (401 when missing, unknown, expired or of a disabled user). With `role`, also
 *    `X-Instance-Slug`: an instance the user is not a member of is 404 instance_not_found (as one
 *    that does not exist), a role below `role` 403 forbidden; the handler gets the member's tenant
 *    and role. Without `role` the route is the user's own (its instances, its session).
 */
export type RouteAuth = { kind: 'api_key'; scope: Scope } | { kind: 'public' } | { kind: 'session'; role?: PanelRole };

/** What every handler gets: the validated input and the process's dependencies. */
export interface RequestContext<Q, P, B> {
  query: Q;
  params: P;
  body: B;
  requestId: string;
  deps: AppDeps;
  /** The caller as events record it: its address (req.ip, so TRUST_PROXY applies) and User-Agent. */
  client: { ip: string | undefined; userAgent: string | undefined };
}

/** An API-key route's handler also gets the tenant of the key. */
export interface RouteContext<Q, P, B> extends RequestContext<Q, P, B> {
  tenant: Tenant;
}

/** A panel route's handler gets the session (its user) ... */
export interface SessionContext<Q, P, B> extends RequestContext<Q, P, B> {
  session: Session;
}

/** ... and, for a route of an instance, the member's tenant and role there. */
export interface MemberContext<Q, P, B> extends SessionContext<Q, P, B> {
  tenant: Tenant;
  role: PanelRole;
}

export interface RouteSuccess {
  status: number;
  description: string;
  /** Default application/json; a page is text/html, the pixel image/gif. */
  contentType?: string;
  schema?: JsonSchema;
  /** Other media types the same answer may take, with their schemas (an export's format=json beside its CSV). */
  alternatives?: Record<string, JsonSchema>;
  /** Response headers worth documenting (a redirect's Location). */
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

/** A group of the API reference (api/routes/tags.ts): the OpenAPI document declares each with its description. */
export interface RouteTag {
  name: string;
  description: string;
}

interface RouteShape {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path, e.g. /v1/senders/{id}. */
  path: string;
  operationId: string;
  /** One line: the reference's title of the operation. */
  summary: string;
  /** What the operation does, its rules and its caveats (the spec's words): the reference shows it under the summary. */
  description: string;
  tag: RouteTag;
  params?: Record<string, JsonSchema>;
  query?: Record<string, JsonSchema>;
  /** Request headers the route reads (Idempotency-Key): documented in OpenAPI; the handler reads them. */
  requestHeaders?: Record<string, JsonSchema>;
  body?: JsonSchema;
  /**
   * json (default): a JSON body, anything else 415. form: an HTML form or an RFC 8058 one-click
   * POST, read as multipart/form-data when it says so and as urlencoded otherwise (mail clients
   * label one-click bodies loosely); its fields arrive as text, like a query string. csv: a
   * text/csv body the handler streams itself from res.req (a panel import: any size, read once,
   * never held in memory); anything else 415. body (a schema) is not given for it.
   */
  bodyType?: 'json' | 'form' | 'csv';
  bodyRequired?: boolean;
  /** Largest accepted body after decompression; default DEFAULT_MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  success: RouteSuccess;
  /**
   * Answers besides `success` and the errors: a conditional GET's 304 (body none), an idempotent
   * retry's 200 (body success: the original answer again, of `success`'s schema).
   */
  alsoAnswers?: Record<number, { description: string; body: 'none' | 'success' }>;
  /** Statuses this route can answer beyond the common ones (api_key: 401, 403, 422, 500, 503; session: 401, 422, 500, 503, with a role also 400, 403, 404; public: 422, 500, 503). */
  errors?: readonly number[];
  /** The handler answers its `errors` with an HTML page to a browser (Accept prefers text/html), a problem object otherwise. */
  errorPages?: boolean;
}

export interface ApiKeyRoute<Q = any, P = any, B = any> extends RouteShape {
  auth: { kind: 'api_key'; scope: Scope };
  /** Returns the JSON body of `success`, or undefined when it wrote the response itself (streams, pages). */
  handler(ctx: RouteContext<Q, P, B>, res: Response): Promise<unknown>;
}

export interface PublicRoute<Q = any, P = any, B = any> extends RouteShape {
  auth: { kind: 'public' };
  handler(ctx: RequestContext<Q, P, B>, res: Response): Promise<unknown>;
}

export interface SessionRoute<Q = any, P = any, B = any> extends RouteShape {
  auth: { kind: 'session'; role?: undefined };
  handler(ctx: SessionContext<Q, P, B>, res: Response): Promise<unknown>;
}

export interface MemberRoute<Q = any, P = any, B = any> extends RouteShape {
  auth: { kind: 'session'; role: PanelRole };
  handler(ctx: MemberContext<Q, P, B>, res: Response): Promise<unknown>;
}

/**
 * One declaration per endpoint drives everything about it: the Express mount, authentication,
 * body reading and its limit, validation of path/query/body (and so the 400/413/415/422
 * answers), the 405 Allow list, /metrics's route label and the OpenAPI document. Nothing else
 * describes a route, API, panel or public.
 */
export type Route<Q = any, P = any, B = any> = ApiKeyRoute<Q, P, B> | PublicRoute<Q, P, B> | SessionRoute<Q, P, B> | MemberRoute<Q, P, B>;

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** What a schema written `as const` describes (json-schema-to-ts); one typed only JsonSchema says nothing of its shape. */
type Described<S> = JsonSchema extends S ? unknown : S extends JSONSchema ? FromSchema<S> : unknown;
type WithDefault<M> = { [K in keyof M]: M[K] extends { default: unknown } ? K : never }[keyof M];
/** Query parameters after validation: those with a default are always there (ajv fills them in), the others may be absent. */
type QueryOf<M> = { [K in WithDefault<M>]: Described<M[K]> } & { [K in Exclude<keyof M, WithDefault<M>>]?: Described<M[K]> };
/** Path parameters after validation: every one is there. */
type ParamsOf<M> = { [K in keyof M]: Described<M[K]> };
/** The body after validation; a route whose body is optional (bodyRequired: false) may get none. */
type BodyOf<S, R> = S extends JsonSchema ? Described<S> | (R extends false ? undefined : never) : undefined;
type SchemaMap = Record<string, JsonSchema>;
/** The schemas of a declaration, kept literal so the handler's input types follow from them. */
type Declared<QS, PS, BS, BR> = { query?: QS; params?: PS; body?: BS; bodyRequired?: BR };

/*
 * Without type arguments, defineRoute reads the handler's query, params and body types from the
 * declaration's schemas when they are written `as const` (docs/architecture.md, Types from
 * schemas). With type arguments (the declarations written before, or whose schemas are built
 * by helpers that return JsonSchema), the handler's types are the ones given.
 */
export function defineRoute<const QS extends SchemaMap = {}, const PS extends SchemaMap = {}, const BS extends JsonSchema | undefined = undefined, const BR extends boolean | undefined = undefined>(
  route: ApiKeyRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>> & Declared<QS, PS, BS, BR>,
): ApiKeyRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>>;
export function defineRoute<const QS extends SchemaMap = {}, const PS extends SchemaMap = {}, const BS extends JsonSchema | undefined = undefined, const BR extends boolean | undefined = undefined>(
  route: PublicRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>> & Declared<QS, PS, BS, BR>,
): PublicRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>>;
export function defineRoute<const QS extends SchemaMap = {}, const PS extends SchemaMap = {}, const BS extends JsonSchema | undefined = undefined, const BR extends boolean | undefined = undefined>(
  route: MemberRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>> & Declared<QS, PS, BS, BR>,
): MemberRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>>;
export function defineRoute<const QS extends SchemaMap = {}, const PS extends SchemaMap = {}, const BS extends JsonSchema | undefined = undefined, const BR extends boolean | undefined = undefined>(
  route: SessionRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>> & Declared<QS, PS, BS, BR>,
): SessionRoute<QueryOf<QS>, ParamsOf<PS>, BodyOf<BS, BR>>;
export function defineRoute<Q = Record<string, never>, P = Record<string, never>, B = undefined>(route: ApiKeyRoute<Q, P, B>): ApiKeyRoute<Q, P, B>;
export function defineRoute<Q = Record<string, never>, P = Record<string, never>, B = undefined>(route: PublicRoute<Q, P, B>): PublicRoute<Q, P, B>;
export function defineRoute<Q = Record<string, never>, P = Record<string, never>, B = undefined>(route: MemberRoute<Q, P, B>): MemberRoute<Q, P, B>;
export function defineRoute<Q = Record<string, never>, P = Record<string, never>, B = undefined>(route: SessionRoute<Q, P, B>): SessionRoute<Q, P, B>;
export function defineRoute(route: Route): Route {
  return route;
}
