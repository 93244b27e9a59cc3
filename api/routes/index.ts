import type { Route } from '../route.js';
import { domainRoutes } from './domains.js';
import { mailRoutes } from './mails.js';
import { senderRoutes } from './senders.js';

/** Every public /v1 route. Later issues add their modules here. */
export const routes: Route[] = [...senderRoutes, ...domainRoutes, ...mailRoutes];
