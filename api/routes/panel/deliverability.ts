import type { ApiKeyRoute } from '../../http/route.js';
import { deliverabilityRoutes } from '../deliverability.js';
import { panelMirror } from './mirror.js';

/**
 * The per-provider figures in the panel's dashboard (docs/panel.md, "Dashboard"): the two public
 * listings, GET /v1/deliverability/providers and /providers/{provider}/daily, at
 * /v1/private/deliverability/..., any member reading. Nothing of their own: the dashboard shows
 * exactly what an integration reads, from the same ClickHouse queries and thresholds.
 */
export const panelDeliverabilityRoutes = deliverabilityRoutes.map((route: ApiKeyRoute) => panelMirror(route, 'viewer'));
