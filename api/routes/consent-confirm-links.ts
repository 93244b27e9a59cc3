import { confirmEvent, findConfirmationTarget } from '../../domain/consent/confirmation.js';
import { readConsentConfirmToken } from '../../domain/consent/confirm-token.js';
import { confirmLinkRoutes } from '../pages/confirm-link-routes.js';
import { consentConfirmPage } from '../pages/consent-confirm-page.js';
import { readSignedLink } from '../http/signed-links.js';

/**
 * The double opt-in confirmation link of the confirmation mail (domain/consent/confirm-token.ts
 * builds it: {PUBLIC_URL}/c/{token}), with the GET page / POST confirm shape of every confirm
 * link (api/pages/confirm-link-routes.ts). docs/consent.md, Double opt-in.
 */
export const consentConfirmLinkRoutes = confirmLinkRoutes({
  path: '/c/{token}',
  tokenFor: 'consent confirmation',
  show: {
    operationId: 'showConsentConfirmationPage',
    summary: 'The confirmation page of a double opt-in consent',
    description: 'A page with one button that posts back here; it confirms nothing (link scanners fetch it). 410 consent_event_expired once the event expired.',
  },
  confirm: {
    operationId: 'confirmConsent',
    summary: 'Confirm a double opt-in consent (the page’s form)',
    description:
      'Confirms the pending event: status confirmed, confirmed_at, and the request’s address and user agent kept as evidence ' +
      '(consent.event.confirmed). A confirmed event is left as it is (the page says so); an expired one, or one past ' +
      'CONSENT_CONFIRM_DAYS, confirms nothing: 410 consent_event_expired.',
  },
  async find(deps, raw) {
    const token = await readSignedLink(deps, raw, readConsentConfirmToken);
    return (token && (await findConfirmationTarget(deps.pool, token.instance_id, token.event_id, deps.config.consent.confirmDays))) || undefined;
  },
  confirmTarget: (deps, target, evidence) => confirmEvent(target.tenant, deps.pool, target.eventId, evidence, deps.config.consent.confirmDays),
  page: consentConfirmPage,
  expired: (target) => ({
    code: 'consent_event_expired',
    detail: `consent event ${target.eventId} was not confirmed in time: it is expired and cannot be confirmed`,
  }),
});
