import type { ApiKeyRoute } from '../../http/route.js';
import { panelMirror } from './mirror.js';
import { webhookRoutes } from '../webhooks.js';

/**
 * The instance's webhooks in the panel (docs/panel.md, Webhooks): every /v1/webhooks route at
 * /v1/private/webhooks, any member reading (the list, a webhook, its deliveries), an admin or
 * owner changing (create, edit, pause and resume, delete, rotate the secret, the test event,
 * retry, replay). Nothing of their own: the public routes' declarations, mirrored.
 */
export const panelWebhookRoutes = webhookRoutes.map((route: ApiKeyRoute) => panelMirror(route, route.method === 'get' ? 'viewer' : 'admin'));
