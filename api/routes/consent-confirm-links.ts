import type { Response } from 'express';
import { confirmEvent, findConfirmationTarget, type ConfirmationTarget } from '../../domain/consent/confirmation.js';
import { readConsentConfirmToken } from '../../domain/consent/confirm-token.js';
import { consentConfirmPage, sendConfirmExpired } from '../consent-confirm-page.js';
import { sendLinkNotValid, sendPage } from '../public-pages.js';
import { readSignedLink } from '../signed-links.js';
import { defineRoute, type AppDeps } from '../route.js';
import { linkToken } from '../schemas/public-links.js';

/**
 * The double opt-in confirmation link of the confirmation mail (domain/consent/confirm-token.ts
 * builds it: {PUBLIC_URL}/c/{token}). GET only shows a page and never confirms (link scanners
 * and mail security gateways fetch links); the page's one button POSTs back here, and only that
 * confirms. docs/consent.md, Double opt-in.
 */

// The page's form has no field; a little room for what a browser may add.
const MAX_FORM_BYTES = 1024;

const common = {
  path: '/c/{token}',
  tag: 'Public links',
  auth: { kind: 'public' },
  params: { token: linkToken('consent confirmation') },
  errors: [404, 410],
  errorPages: true,
} as const;

/** The event the link names, or undefined once the 404 (page or problem) is answered. */
async function targetOf(deps: AppDeps, raw: string, res: Response): Promise<ConfirmationTarget | undefined> {
  const token = await readSignedLink(deps, raw, readConsentConfirmToken);
  const target = token && (await findConfirmationTarget(deps.pool, token.instance_id, token.event_id, deps.config.consent.confirmDays));
  if (!target) sendLinkNotValid(res, 'This confirmation link is not valid');
  return target || undefined;
}

export const consentConfirmLinkRoutes = [
  defineRoute<Record<string, never>, { token: string }>({
    ...common,
    method: 'get',
    operationId: 'showConsentConfirmationPage',
    summary: 'The confirmation page of a double opt-in consent',
    description: 'A page with one button that posts back here; it confirms nothing (link scanners fetch it). 410 consent_event_expired once the event expired.',
    success: { status: 200, description: 'The page: confirm, or already confirmed', contentType: 'text/html', schema: { type: 'string' } },
    handler: async ({ params, deps }, res) => {
      const target = await targetOf(deps, params.token, res);
      if (!target) return undefined;
      if (target.state === 'expired') sendConfirmExpired(res, target);
      else sendPage(res, 200, consentConfirmPage(target.state === 'confirmed' ? 'already_confirmed' : 'confirm', target));
      return undefined;
    },
  }),
  defineRoute<Record<string, never>, { token: string }, Record<string, string>>({
    ...common,
    method: 'post',
    operationId: 'confirmConsent',
    summary: 'Confirm a double opt-in consent (the page’s form)',
    description:
      'Confirms the pending event: status confirmed, confirmed_at, and the request’s address and user agent kept as evidence ' +
      '(consent.event.confirmed). A confirmed event is left as it is (the page says so); an expired one, or one past ' +
      'CONSENT_CONFIRM_DAYS, confirms nothing: 410 consent_event_expired.',
    body: { type: 'object', description: 'The page’s form: no field is read.' },
    bodyType: 'form',
    bodyRequired: false,
    maxBodyBytes: MAX_FORM_BYTES,
    success: { status: 200, description: 'The page: confirmed, or already confirmed', contentType: 'text/html', schema: { type: 'string' } },
    handler: async ({ params, deps, client }, res) => {
      const target = await targetOf(deps, params.token, res);
      if (!target) return undefined;
      const outcome = await confirmEvent(target.tenant, deps.pool, target.eventId, client, deps.config.consent.confirmDays);
      if (outcome === undefined) sendLinkNotValid(res, 'This confirmation link is not valid');
      else if (outcome === 'expired') sendConfirmExpired(res, target);
      else sendPage(res, 200, consentConfirmPage(outcome, target));
      return undefined;
    },
  }),
];
