import { confirmSubmission, findSubmissionConfirmTarget, readFormConfirmToken } from '../../domain/forms/confirm.js';
import { confirmLinkRoutes } from '../pages/confirm-link-routes.js';
import { formConfirmPage } from '../pages/form-confirm-page.js';
import { readSignedLink } from '../http/signed-links.js';

/**
 * The confirmation link of a form submission's confirmation mail (domain/forms/confirm.ts builds
 * it: {PUBLIC_URL}/fc/{token}), with the GET page / POST confirm shape of every confirm link
 * (api/pages/confirm-link-routes.ts): only the POST confirms the submission and its consent events.
 * docs/forms.md, Confirmation link.
 */
export const formConfirmLinkRoutes = confirmLinkRoutes({
  path: '/fc/{token}',
  tokenFor: 'form submission confirmation',
  show: {
    operationId: 'showFormConfirmationPage',
    summary: 'The confirmation page of a form submission',
    description: 'A page with one button that posts back here; it confirms nothing (link scanners fetch it). 410 form_submission_expired past the window.',
  },
  confirm: {
    operationId: 'confirmFormSubmission',
    summary: 'Confirm a form submission (the page’s form)',
    description:
      'Confirms the pending submission and its pending consent events (the request’s address and user agent kept as evidence; ' +
      'form.submission.confirmed and consent.event.confirmed), then its auto-reply, team notice and dataset feed follow as jobs. ' +
      'A confirmed submission is left as it is; one past CONSENT_CONFIRM_DAYS confirms nothing: 410 form_submission_expired.',
  },
  async find(deps, raw) {
    const token = await readSignedLink(deps, raw, readFormConfirmToken);
    return (token && (await findSubmissionConfirmTarget(deps.pool, token.instance_id, token.submission_id, deps.config.consent.confirmDays))) || undefined;
  },
  confirmTarget: (deps, target, evidence) =>
    confirmSubmission(target.tenant, deps.pool, deps.queue, target.submissionId, evidence, deps.config.consent.confirmDays),
  page: formConfirmPage,
  expired: (target) => ({
    code: 'form_submission_expired',
    detail: `form submission ${target.submissionId} was not confirmed in time and cannot be confirmed`,
  }),
});
