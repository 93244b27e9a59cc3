import type { JsonSchema } from '../../../domain/validation.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import type { Pool } from '../../../sql/pool.js';
import { defineRoute, type MemberRoute } from '../../http/route.js';
import type { RouteNaming } from '../reads.js';
import { TAGS } from '../tags.js';

/**
 * PATCH of a resource's is_active alone: the panel's `<area> activate|deactivate` (cli/command.ts,
 * activationCommands), an admin's or owner's, through the same setter the CLI calls, answered
 * with the resource as it is then. A consent term, a catalog field and a form are activated this
 * way; each declares only its path, names, words and setter.
 */
export function activationRoute<P>(spec: RouteNaming & {
  params: Record<string, JsonSchema>;
  /** What is_active false and true do to the resource (the body's one property). */
  meaning: string;
  /** The 200 answer: the resource. */
  answer: { description: string; schema: JsonSchema };
  errors: number[];
  set: (tenant: Tenant, pool: Pool, params: P, active: boolean) => Promise<unknown>;
}): MemberRoute<Record<string, never>, P, { is_active: boolean }> {
  const { params, meaning, answer, errors, set, ...naming } = spec;
  return defineRoute<Record<string, never>, P, { is_active: boolean }>({
    method: 'patch',
    ...naming,
    tag: TAGS.panel,
    auth: { kind: 'session', role: 'admin' },
    params,
    body: { type: 'object', required: ['is_active'], additionalProperties: false, properties: { is_active: { type: 'boolean', description: meaning } } },
    success: { status: 200, ...answer },
    errors,
    handler: ({ tenant, params, body, deps }) => set(tenant, deps.pool, params, body.is_active),
  });
}
