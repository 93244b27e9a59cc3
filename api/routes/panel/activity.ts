import type { ApiKeyRoute } from '../../http/route.js';
import { activityRoutes } from '../activities.js';
import { activityExportRoutes } from '../activity-exports.js';
import { mailRoutes } from '../mails.js';
import { panelMirror } from './mirror.js';

/**
 * The instance's activity in the panel (docs/panel.md, Activity): the four listings (sent, opens,
 * clicks, unopened), their four exports (the same files streamed) and the mail reads (the list,
 * a mail, its logs) at /v1/private/..., any member reading. Sending stays with an API key: the
 * panel does not mirror POST /v1/mails/send.
 */
const mailReads = mailRoutes.filter((route: ApiKeyRoute) => route.method === 'get');

export const panelActivityRoutes = [...activityRoutes, ...activityExportRoutes, ...mailReads].map((route: ApiKeyRoute) => panelMirror(route, 'viewer'));
