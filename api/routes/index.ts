import type { Route } from '../http/route.js';
import { activityRoutes } from './activities.js';
import { activityExportRoutes } from './activity-exports.js';
import { complaintRoutes } from './complaints.js';
import { consentRoutes } from './consent.js';
import { consentConfirmLinkRoutes } from './consent-confirm-links.js';
import { datasetRoutes } from './datasets.js';
import { deliverabilityRoutes } from './deliverability.js';
import { dmarcRoutes } from './dmarc.js';
import { domainRoutes } from './domains.js';
import { fieldRoutes } from './fields.js';
import { formPageRoutes } from './form-pages.js';
import { formConfirmLinkRoutes } from './form-confirm-links.js';
import { formRoutes } from './forms.js';
import { mailRoutes } from './mails.js';
import { panelActivityRoutes } from './panel/activity.js';
import { panelConsentRoutes } from './panel/consent.js';
import { panelDashboardRoutes } from './panel/dashboard.js';
import { panelDatasetRoutes } from './panel/datasets.js';
import { panelDeliverabilityRoutes } from './panel/deliverability.js';
import { panelDmarcRoutes } from './panel/dmarc.js';
import { panelDomainRoutes } from './panel/domains.js';
import { panelFormRoutes } from './panel/forms.js';
import { panelInstanceRoutes } from './panel/instance.js';
import { panelInvitationRoutes } from './panel/invitations.js';
import { panelKeyRoutes } from './panel/keys.js';
import { panelMemberRoutes } from './panel/members.js';
import { panelRestrictionRoutes } from './panel/restrictions.js';
import { panelSenderRoutes } from './panel/senders.js';
import { panelSessionRoutes } from './panel/sessions.js';
import { panelTemplateRoutes } from './panel/templates.js';
import { panelWebhookRoutes } from './panel/webhooks.js';
import { restrictionRoutes } from './restrictions.js';
import { senderRoutes } from './senders.js';
import { templateRoutes } from './templates.js';
import { trackingRoutes } from './tracking.js';
import { unsubscribeLinkRoutes } from './unsubscribe-links.js';
import { unsubscribeRoutes } from './unsubscribes.js';
import { webhookRoutes } from './webhooks.js';

/**
 * Every HTTP entry point of the web process but the infrastructure's (/healthz, /readyz,
 * /metrics, /v1/openapi.json): the /v1 API (API key), the panel's /v1/private API (session) and
 * the public links put in mails. A new
 * area adds its module here.
 */
export const routes: Route[] = [
  ...senderRoutes,
  ...domainRoutes,
  ...dmarcRoutes,
  ...mailRoutes,
  ...templateRoutes,
  ...restrictionRoutes,
  ...unsubscribeRoutes,
  ...complaintRoutes,
  ...consentRoutes,
  ...fieldRoutes,
  ...datasetRoutes,
  ...formRoutes,
  ...activityRoutes,
  ...activityExportRoutes,
  ...deliverabilityRoutes,
  ...webhookRoutes,
  // The operator panel's /v1/private API (session token; docs/panel.md).
  ...panelSessionRoutes,
  ...panelMemberRoutes,
  ...panelInvitationRoutes,
  ...panelInstanceRoutes,
  ...panelKeyRoutes,
  ...panelSenderRoutes,
  ...panelDomainRoutes,
  ...panelDmarcRoutes,
  ...panelRestrictionRoutes,
  ...panelDashboardRoutes,
  ...panelDeliverabilityRoutes,
  ...panelWebhookRoutes,
  ...panelActivityRoutes,
  ...panelConsentRoutes,
  ...panelTemplateRoutes,
  ...panelFormRoutes,
  ...panelDatasetRoutes,
  // Public links (auth public: the signed token in the path is the credential).
  ...trackingRoutes,
  ...unsubscribeLinkRoutes,
  ...consentConfirmLinkRoutes,
  ...formPageRoutes,
  ...formConfirmLinkRoutes,
];
