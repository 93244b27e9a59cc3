import type { Route } from '../route.js';
import { activityRoutes } from './activities.js';
import { activityExportRoutes } from './activity-exports.js';
import { complaintRoutes } from './complaints.js';
import { domainRoutes } from './domains.js';
import { mailRoutes } from './mails.js';
import { restrictionRoutes } from './restrictions.js';
import { senderRoutes } from './senders.js';
import { unsubscribeRoutes } from './unsubscribes.js';

/** Every public /v1 route. Later issues add their modules here. */
export const routes: Route[] = [...senderRoutes, ...domainRoutes, ...mailRoutes, ...restrictionRoutes, ...unsubscribeRoutes, ...complaintRoutes, ...activityRoutes, ...activityExportRoutes];
