import type { JsonSchema } from '../../domain/validation.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { Pool } from '../../sql/pool.js';
import { defineRoute, type ApiKeyRoute, type RouteContext, type RouteTag, type Scope } from '../http/route.js';
import { collectionSchema } from '../schemas/common.js';

/**
 * The two GET shapes most /v1 areas share: a listing of the key's tenant, and one of its
 * resources named by the path. Each area declares only what is its own (path, names, scope,
 * schemas, the domain call); the method, the auth, the answer's status and shape are filled in
 * here once, so the areas answer alike.
 */

/** What names and documents a route, beside what it does. */
export type RouteNaming = Pick<ApiKeyRoute, 'path' | 'operationId' | 'summary' | 'description'>;

interface ReadShape extends RouteNaming {
  tag: RouteTag;
  scope: Scope;
}

export interface Listing<Q> extends ReadShape {
  query: Record<string, JsonSchema>;
  /** The 200 answer: its description, and the schema of one item of its `data`. */
  page: { description: string; item: JsonSchema };
  /** The domain's listing, given the key's tenant, the pool and the validated query. */
  list: (tenant: Tenant, pool: Pool, query: Q) => Promise<unknown>;
}

/** A listing read from Postgres: a page of items answered 200 as the collection shape (data + pagination). */
export function listRoute<Q>({ scope, page, list, ...shape }: Listing<Q>): ApiKeyRoute<Q> {
  return defineRoute<Q>({
    method: 'get',
    ...shape,
    auth: { kind: 'api_key', scope },
    success: { status: 200, description: page.description, schema: collectionSchema(page.item) },
    handler: ({ tenant, query, deps }) => list(tenant, deps.pool, query),
  });
}

export interface Reading<P> extends ReadShape {
  params: Record<string, JsonSchema>;
  /** The 200 answer: its description and schema. */
  found: { description: string; schema: JsonSchema };
  /** Reads the resource; one the tenant does not have throws NotFoundError (404). */
  read: (ctx: RouteContext<Record<string, never>, P, undefined>) => Promise<unknown>;
}

/** One resource named by the path: 200 with it, 404 when the tenant has no such one. */
export function readRoute<P>({ scope, found, read, ...shape }: Reading<P>): ApiKeyRoute<Record<string, never>, P> {
  return defineRoute<Record<string, never>, P>({
    method: 'get',
    ...shape,
    auth: { kind: 'api_key', scope },
    success: { status: 200, ...found },
    errors: [404],
    handler: read,
  });
}
