import type { ApiKeyRoute } from '../../http/route.js';
import { dmarcRoutes } from '../dmarc.js';
import { panelMirror } from './mirror.js';

/**
 * A domain's DMARC aggregate reports in the panel (docs/panel.md, "Its DMARC reports"): the two
 * public listings, GET /v1/domains/{domain_name}/dmarc-reports and /dmarc-sources, at
 * /v1/private/domains/{domain_name}/..., any member reading. Nothing of their own: the page shows
 * exactly what an integration reads, from the same ClickHouse queries.
 */
export const panelDmarcRoutes = dmarcRoutes.map((route: ApiKeyRoute) => panelMirror(route, 'viewer'));
