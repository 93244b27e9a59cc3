import { createApiKey, listApiKeys, revokeApiKey } from '../../../domain/tenancy/api-keys.js';
import { defineRoute } from '../../http/route.js';
import { createdKeySchema, keyCreateSchema, keyIdParam, keysSchema, revokedKeySchema } from '../../schemas/panel-resources.js';
import { TAGS } from '../tags.js';

/**
 * The instance's API keys in the panel (docs/panel.md): owner only, reading included (a key's
 * scopes and networks are the instance's credentials). Through the functions of `cartero key
 * create` and `key revoke`; a key_id of another instance is api_key_not_found.
 */

const tag = TAGS.panel;

export const panelKeyRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/private/keys',
    operationId: 'listPanelKeys',
    summary: "List the instance's API keys",
    description:
      'Newest first, revoked ones included (revoked_at set). Never a secret: the token is not stored (only its SHA-256) and its hash is not shown. Owner only.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    success: { status: 200, description: 'The keys, without secrets', schema: keysSchema },
    handler: async ({ tenant, deps }) => ({ data: await listApiKeys(deps.pool, tenant.instanceId) }),
  }),
  defineRoute<Record<string, never>, Record<string, never>, { scopes: string[]; allowed_cidrs?: string[]; expires_at?: string | null }>({
    method: 'post',
    path: '/v1/private/keys',
    operationId: 'createPanelKey',
    summary: 'Create an API key',
    description:
      'With its scopes, the networks it may be used from (default any) and an expiry (default never). The answer holds the full key, ' +
      'crt.<key_id>.<token>, and is the only place it is ever shown. An empty scope list is 409 api_key_scope_required; ' +
      'a malformed network 400 invalid_cidr. Owner only.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    body: keyCreateSchema,
    success: { status: 201, description: 'The new key, shown once', schema: createdKeySchema },
    errors: [409],
    handler: async ({ tenant, body, deps }, res) => {
      const key = await createApiKey(deps.pool, {
        instanceSlug: tenant.slug,
        scopes: body.scopes,
        allowCidrs: body.allowed_cidrs,
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
      });
      res.status(201);
      // The one answer holding a secret: no cache, no intermediary keeps it.
      res.set('Cache-Control', 'no-store');
      return key;
    },
  }),
  defineRoute<Record<string, never>, { key_id: string }>({
    method: 'delete',
    path: '/v1/private/keys/{key_id}',
    operationId: 'revokePanelKey',
    summary: 'Revoke an API key',
    description:
      'The key gets 401 from then on; it stays listed with revoked_at. Revoking a revoked key answers its first revocation. ' +
      '404 api_key_not_found for a key_id the instance does not have. Owner only.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    params: { key_id: keyIdParam },
    success: { status: 200, description: 'The key and when it was revoked', schema: revokedKeySchema },
    handler: ({ tenant, params, deps }) => revokeApiKey(deps.pool, params.key_id, { instanceId: tenant.instanceId }),
  }),
];
