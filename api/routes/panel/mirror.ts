import type { PanelRole } from '../../../domain/panel/roles.js';
import { defineRoute, type ApiKeyRoute, type MemberRoute } from '../../http/route.js';
import { TAGS } from '../tags.js';

/**
 * A public /v1 route offered to the panel as it is (docs/panel.md): the same schemas,
 * validation, answers and handler, at /v1/private/... behind a member's session instead of an
 * API key. The handler cannot tell the two apart: an API key's tenant and a member's are the
 * same Tenant (api/app.ts hands res.locals.tenant to both), so the panel and an integration
 * cannot disagree on a rule. Use it where the panel needs exactly what the API does; a panel
 * operation with rules of its own (the CLI's) is declared in its own panel-*.ts.
 */

const WHO: Record<PanelRole, string> = {
  viewer: 'Any member.',
  admin: 'Admin or owner.',
  owner: 'Owner only.',
};

export function panelMirror<Q, P, B>(route: ApiKeyRoute<Q, P, B>, role: PanelRole): MemberRoute<Q, P, B> {
  if (!route.path.startsWith('/v1/') || route.path.startsWith('/v1/private/')) throw new Error(`panelMirror: ${route.path} is not a public /v1 path`);
  const { auth, handler, operationId, description, tag: _tag, ...shape } = route;
  return defineRoute<Q, P, B>({
    ...shape,
    path: route.path.replace(/^\/v1\//, '/v1/private/'),
    operationId: `panel${operationId[0]!.toUpperCase()}${operationId.slice(1)}`,
    description: `${description} ${WHO[role]} The panel's copy of ${route.method.toUpperCase()} ${route.path} (scope ${auth.scope}).`,
    tag: TAGS.panel,
    auth: { kind: 'session', role },
    // A member's view, two of whose answers hold a signing secret: kept by no cache on the way.
    handler: (ctx, res) => {
      res.set('Cache-Control', 'no-store');
      return handler(ctx, res);
    },
  });
}
